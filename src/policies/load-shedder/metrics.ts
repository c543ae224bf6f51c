import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { LoadShedder } from './LoadShedder.js';

/** The metric families of load shedders. */
export const loadShedderFamilies = {
  admitted: {
    name: 'breakwater_load_shedder_admitted_total',
    type: 'counter',
    help: 'Calls a load shedder let through.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.load_shedder.admitted', kind: 'counter' },
  },
  refused: {
    name: 'breakwater_load_shedder_refused_total',
    type: 'counter',
    help: 'Calls a load shedder refused, by criticality.',
    labels: ['name', 'key', 'criticality'],
    unit: '{call}',
    otel: { name: 'breakwater.load_shedder.refused', kind: 'counter' },
  },
  refusalRate: {
    name: 'breakwater_load_shedder_refusal_rate',
    type: 'gauge',
    help: 'The share of calls a load shedder refuses now.',
    labels: ['name', 'key'],
    unit: '1',
    otel: { name: 'breakwater.load_shedder.refusal_rate', kind: 'upDownCounter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one load shedder series (index of `refused`: the criticality level). */
export interface LoadShedderCounts {
  admitted: number;
  refused: number[];
  refusalRate: number;
}

const f = loadShedderFamilies;
const LEVEL_NAMES = ['sheddable', 'sheddable-plus', 'critical', 'critical-plus'] as const;

/** @internal How load shedders report into their families. */
export const loadShedderMetrics: KindMetrics<LoadShedder, LoadShedderCounts> = {
  families: Object.values(f),
  enabled: (s) => s.metrics.enabled,
  counts: () => ({ admitted: 0, refused: [0, 0, 0, 0], refusalRate: 0 }),
  add(c, s) {
    const stats = s.stats();
    c.admitted += stats.admitted;
    LEVEL_NAMES.forEach((level, i) => {
      c.refused[i]! += stats.refused[level];
    });
    c.refusalRate = Math.max(c.refusalRate, stats.refusalRate);
  },
  addCounts(c, other) {
    c.admitted += other.admitted;
    for (let i = 0; i < 4; i++) c.refused[i]! += other.refused[i]!;
    c.refusalRate = Math.max(c.refusalRate, other.refusalRate);
  },
  isEmpty: (c) => c.admitted + c.refused.reduce((a, b) => a + b, 0) === 0,
  series(sink, name, key, c) {
    const labels = { name, key };
    sink.add(f.admitted, labels, c.admitted);
    LEVEL_NAMES.forEach((criticality, i) => {
      sink.add(f.refused, { name, key, criticality }, c.refused[i]!);
    });
    sink.add(f.refusalRate, labels, c.refusalRate);
  },
};
