import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import type { RetryBudget } from './RetryBudget.js';

/** Counts of one retry budget series. */
export interface RetryBudgetCounts {
  calls: number;
  allowed: number;
  refused: number;
  balance: number;
}

const declared = declareMetrics<RetryBudget, RetryBudgetCounts, 'calls' | 'attempts' | 'balance'>({
  prefix: 'retry_budget',
  readings: {
    calls: counter('{call}', 'Calls started under the policies spending from a retry budget.'),
    attempts: counter(
      '{attempt}',
      'Extra attempts (retries, hedges) asked of a retry budget, by result.',
      { label: 'result', fields: { allowed: 'allowed', refused: 'refused' } },
    ),
    balance: gauge(
      '1',
      'What a retry budget has left: extra attempts it would grant now, or its tokens (model tokens).',
    ),
  },
});

/** The metric families of retry budgets. */
export const retryBudgetFamilies = declared.families;
/** @internal How retry budgets report into their families. */
export const retryBudgetMetrics = declared.metrics;
