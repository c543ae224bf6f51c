import { defineKind } from '../../protocol/defineKind.js';
import { Coalescer, type CoalesceStats } from './Coalescer.js';
import { coalesceSchema } from './config.js';
import { type CoalesceCounts, coalesceMetrics } from './metrics.js';
import {
  type CoalesceOptions,
  type ResolvedCoalesceOptions,
  resolveCoalesceOptions,
} from './options.js';

/** The coalescing kind: what the registry, config data and exporters know of it. */
export const coalesceKind = defineKind<Coalescer, ResolvedCoalesceOptions, CoalesceCounts>({
  name: 'coalesce',
  label: 'coalescing policy',
  section: 'coalescers',
  policy: Coalescer,
  resolve: (data) => resolveCoalesceOptions(data as CoalesceOptions),
  config: { schema: coalesceSchema, codeOnly: ['share'] },
  metrics: coalesceMetrics,
  dashboard({ stats }) {
    const s = stats as CoalesceStats;
    return {
      calls: s.calls,
      trend: s.coalesced,
      trendLabel: 'calls coalesced per second',
      detail: `${s.coalesced} of ${s.calls} calls coalesced into ${s.flights} flights (${s.abandoned} abandoned), ${s.inFlight} in flight`,
    };
  },
});
