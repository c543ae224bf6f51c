import { defineKind } from '../../protocol/defineKind.js';
import { rejectedKindChannel, rejectedSpanEvent } from '../shared/rejectedEvent.js';
import { Bulkhead, type BulkheadStats } from './Bulkhead.js';
import { bulkheadSchema } from './config.js';
import { BulkheadGroup } from './keyed.js';
import { type BulkheadCounts, bulkheadMetrics } from './metrics.js';
import {
  type BulkheadOptions,
  type ResolvedBulkheadOptions,
  resolveBulkheadOptions,
} from './options.js';

/** The bulkhead kind: what the registry, config data and exporters know of it. */
export const bulkheadKind = defineKind<Bulkhead, ResolvedBulkheadOptions, BulkheadCounts>({
  name: 'bulkhead',
  label: 'bulkhead',
  section: 'bulkheads',
  policy: Bulkhead,
  resolve: (data) => resolveBulkheadOptions(data as BulkheadOptions),
  config: { schema: bulkheadSchema },
  keyed: (name, options) => new BulkheadGroup(name, options),
  metrics: bulkheadMetrics,
  // Queue timeouts are fired by the bulkhead's timer, CoDel refusals by another call's
  // arrival or release: both outside the waiting call's context.
  channels: [rejectedKindChannel],
  spanEvents: [rejectedSpanEvent('bulkhead', ['full'], ['queue-timeout', 'codel'])],
  dashboard({ stats }) {
    const s = stats as BulkheadStats;
    const r = s.rejectionsByReason;
    return {
      calls: s.admitted,
      rejected: r.full + r.queueTimeout + r.codel,
      levels: { 'in flight': s.inFlight, limit: s.maxConcurrent, queued: s.queueLength },
      levelsLabel: 'calls in flight',
      detail:
        `${s.inFlight} / ${s.maxConcurrent} in flight, ${s.queueLength} queued` +
        (s.queue === 'fifo' ? '' : ` (${s.queue}${s.dropping ? ', dropping' : ''})`),
    };
  },
});
