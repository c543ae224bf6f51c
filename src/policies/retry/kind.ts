import type { PolicyKindDescriptor } from '../../protocol/kind.js';
import { checkThenApply } from '../shared/reconfigureWith.js';
import { retrySchema } from './config.js';
import { retryKindChannel, retrySpanEvent } from './diagnostics.js';
import { type RetryCounts, retryMetrics } from './metrics.js';
import { type ResolvedRetryOptions, type RetryOptions, resolveRetryOptions } from './options.js';
import { Retry, type RetryStats } from './Retry.js';

/** The retry kind: what the registry, config data and exporters know of it. */
export const retryKind: PolicyKindDescriptor<Retry, ResolvedRetryOptions, RetryCounts> = {
  name: 'retry',
  label: 'retry policy',
  section: 'retries',
  is: (value): value is Retry => value instanceof Retry,
  create: (options) => new Retry(options as RetryOptions),
  resolve: (data) => resolveRetryOptions(data as RetryOptions),
  reconfigure: checkThenApply,
  dispose: (retry) => retry.dispose(),
  view: (retry) => ({ stats: retry.stats() }),
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
      detail: `${s.retries} retries, ${s.gaveUp} gave up, ${s.waiting} waiting`,
    };
  },
};
