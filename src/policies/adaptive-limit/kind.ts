import { defineKind } from '../../protocol/defineKind.js';
import { rejectedKindChannel, rejectedSpanEvent } from '../shared/rejectedEvent.js';
import { AdaptiveLimit, type AdaptiveLimitStats } from './AdaptiveLimit.js';
import { adaptiveLimitSchema } from './config.js';
import { limitChangeKindChannel } from './diagnostics.js';
import { type AdaptiveLimitCounts, adaptiveLimitMetrics } from './metrics.js';
import {
  type AdaptiveLimitOptions,
  type ResolvedAdaptiveLimitOptions,
  resolveAdaptiveLimitOptions,
} from './options.js';

const ms = (value: number): string => (value > 0 ? `${value.toFixed(1)} ms` : '–');

/** The adaptive limit kind: what the registry, config data and exporters know of it. */
export const adaptiveLimitKind = defineKind<
  AdaptiveLimit,
  ResolvedAdaptiveLimitOptions,
  AdaptiveLimitCounts
>({
  name: 'adaptiveLimit',
  label: 'adaptive limit',
  section: 'adaptiveLimits',
  policy: AdaptiveLimit,
  resolve: (data) => resolveAdaptiveLimitOptions(data as AdaptiveLimitOptions),
  config: { schema: adaptiveLimitSchema, codeOnly: ['handle', 'handleResult'] },
  metrics: adaptiveLimitMetrics,
  // Queue timeouts are fired by the queue's timer, CoDel refusals by another call's arrival or
  // release: both outside the waiting call's context.
  channels: [limitChangeKindChannel, rejectedKindChannel],
  spanEvents: [
    rejectedSpanEvent('adaptiveLimit', ['limit', 'deadline'], ['queue-timeout', 'codel']),
  ],
  dashboard({ stats }) {
    const s = stats as AdaptiveLimitStats;
    const r = s.rejectionsByReason;
    return {
      calls: s.admitted,
      rejected: r.limit + r.queueTimeout + r.codel + r.deadline,
      levels: { 'in flight': s.inFlight, limit: s.limit, queued: s.queueLength },
      levelsLabel: 'calls in flight',
      detail:
        `limit ${s.limit}, ${s.inFlight} in flight` +
        (s.queueLength > 0 || s.queue !== 'fifo' ? `, ${s.queueLength} queued` : '') +
        `; latency ${ms(s.recentLatency)}, baseline ${ms(s.baselineLatency)} (${s.algorithm}: ${s.decision})`,
    };
  },
});
