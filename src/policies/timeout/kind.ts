import { defineKind } from '../../protocol/defineKind.js';
import { formatMs } from '../shared/formatMs.js';
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
export const timeoutKind = defineKind<Timeout, ResolvedTimeoutOptions, TimeoutCounts>({
  name: 'timeout',
  label: 'timeout',
  section: 'timeouts',
  policy: Timeout,
  resolve: (data) => resolveTimeoutOptions(data as unknown as TimeoutOptions),
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
      failed: s.timeouts,
      detail: `limit ${formatMs(s.timeout)}, ${s.timeouts} timed out`,
    };
  },
});
