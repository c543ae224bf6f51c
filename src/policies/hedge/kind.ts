import { defineKind } from '../../protocol/defineKind.js';
import { hedgeSchema } from './config.js';
import { hedgeKindChannel } from './diagnostics.js';
import { Hedge, type HedgeStats } from './Hedge.js';
import { type HedgeCounts, hedgeMetrics } from './metrics.js';
import { type HedgeOptions, type ResolvedHedgeOptions, resolveHedgeOptions } from './options.js';

/** The hedge kind: what the registry, config data and exporters know of it. */
export const hedgeKind = defineKind<Hedge, ResolvedHedgeOptions, HedgeCounts>({
  name: 'hedge',
  label: 'hedge policy',
  section: 'hedges',
  policy: Hedge,
  resolve: (data) => resolveHedgeOptions(data as HedgeOptions),
  channels: [hedgeKindChannel],
  config: {
    schema: hedgeSchema,
    codeOnly: ['handle', 'handleResult', 'budget', 'retryAfter'],
  },
  metrics: hedgeMetrics,
  dashboard({ stats }) {
    const s = stats as HedgeStats;
    return {
      calls: s.calls,
      trend: s.hedges,
      trendLabel: 'hedges per second',
      detail: `${s.hedges} hedges (${s.won} won), ${s.refused} refused by the budget, ${s.calls} calls`,
    };
  },
});
