import { defineKind } from '../../protocol/defineKind.js';
import { retrySchema } from './config.js';
import { retryKindChannel, retrySpanEvent } from './diagnostics.js';
import { type RetryCounts, retryMetrics } from './metrics.js';
import { type ResolvedRetryOptions, type RetryOptions, resolveRetryOptions } from './options.js';
import { Retry, type RetryStats } from './Retry.js';

/** The retry kind: what the registry, config data and exporters know of it. */
export const retryKind = defineKind<Retry, ResolvedRetryOptions, RetryCounts>({
  name: 'retry',
  label: 'retry policy',
  section: 'retries',
  policy: Retry,
  resolve: (data) => resolveRetryOptions(data as RetryOptions),
  config: {
    schema: retrySchema,
    codeOnly: ['handle', 'handleResult', 'lastResult', 'retryAfter', 'random'],
    dependsOn: new Map([['maxDelay', ['delay']]]),
  },
  metrics: retryMetrics,
  channels: [retryKindChannel],
  spanEvents: [retrySpanEvent],
  dashboard({ stats }) {
    const s = stats as RetryStats;
    return {
      trend: s.retries,
      trendLabel: 'retries per second',
      failed: s.gaveUp,
      detail: `${s.retries} retries, ${s.gaveUp} gave up, ${s.waiting} waiting`,
    };
  },
});
