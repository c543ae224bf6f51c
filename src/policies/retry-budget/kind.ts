import { defineKind } from '../../protocol/defineKind.js';
import { mergeRetryBudget, retryBudgetSchema } from './config.js';
import { type RetryBudgetCounts, retryBudgetMetrics } from './metrics.js';
import {
  type ResolvedRetryBudgetOptions,
  type RetryBudgetOptions,
  resolveRetryBudgetOptions,
} from './options.js';
import { RetryBudget, type RetryBudgetStats } from './RetryBudget.js';

/** The retry budget kind: what the registry, config data and exporters know of it. */
export const retryBudgetKind = defineKind<
  RetryBudget,
  ResolvedRetryBudgetOptions,
  RetryBudgetCounts
>({
  name: 'retryBudget',
  label: 'retry budget',
  section: 'retryBudgets',
  policy: RetryBudget,
  resolve: (data) => resolveRetryBudgetOptions(data as RetryBudgetOptions),
  config: { schema: retryBudgetSchema, merge: mergeRetryBudget },
  metrics: retryBudgetMetrics,
  dashboard({ stats }) {
    const s = stats as RetryBudgetStats;
    return {
      calls: s.calls,
      rejected: s.refused,
      trend: s.allowed,
      trendLabel: 'extra attempts allowed per second',
      levels: { balance: s.balance, 'extra in flight': s.inFlight },
      levelsLabel: 'budget',
      detail: `${s.model}: balance ${s.balance}, ${s.inFlight} extra in flight, ${s.allowed} allowed, ${s.refused} refused`,
    };
  },
});
