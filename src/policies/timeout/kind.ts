import type { PolicyKindDescriptor } from '../../protocol/kind.js';
import { formatMs } from '../shared/formatMs.js';
import { checkThenApply } from '../shared/reconfigureWith.js';
import { checkTimeoutData, missingTimeout, timeoutSchema } from './config.js';
import { timeoutKindChannel } from './diagnostics.js';
import { type TimeoutCounts, timeoutMetrics } from './metrics.js';
import {
  type ResolvedTimeoutOptions,
  resolveTimeoutOptions,
  type TimeoutOptions,
} from './options.js';
import { Timeout, type TimeoutStats } from './Timeout.js';

/** The timeout kind: what the registry, config data and exporters know of it. */
export const timeoutKind: PolicyKindDescriptor<Timeout, ResolvedTimeoutOptions, TimeoutCounts> = {
  name: 'timeout',
  label: 'timeout',
  section: 'timeouts',
  is: (value): value is Timeout => value instanceof Timeout,
  create: (options) => new Timeout(options as TimeoutOptions),
  resolve: (data) => resolveTimeoutOptions(data as unknown as TimeoutOptions),
  reconfigure: checkThenApply,
  dispose: (timeout) => timeout.dispose(),
  view: (timeout) => ({ stats: timeout.stats() }),
  channels: [timeoutKindChannel],
  config: {
    schema: timeoutSchema,
    check: checkTimeoutData,
    missing: missingTimeout,
  },
  metrics: timeoutMetrics,
  dashboard({ stats }) {
    const s = stats as TimeoutStats;
    return {
      trend: s.timeouts,
      trendLabel: 'timeouts per second',
      detail: `limit ${formatMs(s.timeout)}, ${s.timeouts} timed out`,
    };
  },
};
