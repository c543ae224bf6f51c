import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { Hedge } from './Hedge.js';

/** The metric families of hedge policies. */
export const hedgeFamilies = {
  calls: {
    name: 'breakwater_hedge_calls_total',
    type: 'counter',
    help: 'Calls that ran through a hedge policy.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.hedge.calls', kind: 'counter' },
  },
  hedges: {
    name: 'breakwater_hedge_hedges_total',
    type: 'counter',
    help: 'Hedges a hedge policy started (attempts beyond the first).',
    labels: ['name', 'key'],
    unit: '{attempt}',
    otel: { name: 'breakwater.hedge.hedges', kind: 'counter' },
  },
  won: {
    name: 'breakwater_hedge_won_total',
    type: 'counter',
    help: 'Calls whose outcome came from a hedge rather than from their first attempt.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.hedge.won', kind: 'counter' },
  },
  refused: {
    name: 'breakwater_hedge_refused_total',
    type: 'counter',
    help: 'Hedges a retry budget refused.',
    labels: ['name', 'key'],
    unit: '{attempt}',
    otel: { name: 'breakwater.hedge.refused', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one hedge series. */
export interface HedgeCounts {
  calls: number;
  hedges: number;
  won: number;
  refused: number;
}

/** @internal How hedge policies report into their families. */
export const hedgeMetrics: KindMetrics<Hedge, HedgeCounts> = {
  families: Object.values(hedgeFamilies),
  counts: () => ({ calls: 0, hedges: 0, won: 0, refused: 0 }),
  add(c, hedge) {
    const s = hedge.stats();
    c.calls += s.calls;
    c.hedges += s.hedges;
    c.won += s.won;
    c.refused += s.refused;
  },
  addCounts(c, other) {
    c.calls += other.calls;
    c.hedges += other.hedges;
    c.won += other.won;
    c.refused += other.refused;
  },
  isEmpty: (c) => c.calls + c.hedges + c.won + c.refused === 0,
  series(sink, name, key, c) {
    const labels = { name, key };
    sink.add(hedgeFamilies.calls, labels, c.calls);
    sink.add(hedgeFamilies.hedges, labels, c.hedges);
    sink.add(hedgeFamilies.won, labels, c.won);
    sink.add(hedgeFamilies.refused, labels, c.refused);
  },
};
