import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { Timeout } from './Timeout.js';

/** The metric families of timeouts. */
export const timeoutFamilies = {
  timeouts: {
    name: 'breakwater_timeout_timeouts_total',
    type: 'counter',
    help: 'Calls whose deadline passed.',
    labels: ['name', 'key'],
    unit: '{timeout}',
    otel: { name: 'breakwater.timeout.timeouts', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one timeout series. */
export interface TimeoutCounts {
  timeouts: number;
}

/** @internal How timeouts report into their families. */
export const timeoutMetrics: KindMetrics<Timeout, TimeoutCounts> = {
  families: Object.values(timeoutFamilies),
  counts: () => ({ timeouts: 0 }),
  add(c, timeout) {
    c.timeouts += timeout.stats().timeouts;
  },
  addCounts(c, other) {
    c.timeouts += other.timeouts;
  },
  isEmpty: (c) => c.timeouts === 0,
  series(sink, name, key, c) {
    sink.add(timeoutFamilies.timeouts, { name, key }, c.timeouts);
  },
};
