import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { Retry } from './Retry.js';

/** The metric families of retry policies. */
export const retryFamilies = {
  retries: {
    name: 'breakwater_retry_retries_total',
    type: 'counter',
    help: 'Retries a retry policy decided.',
    labels: ['name', 'key'],
    unit: '{retry}',
    otel: { name: 'breakwater.retry.retries', kind: 'counter' },
  },
  gaveUp: {
    name: 'breakwater_retry_gave_up_total',
    type: 'counter',
    help: 'Calls a retry policy gave up on: attempts or time used up, or a failure it does not retry after a retry.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.retry.gave_up', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one retry series. */
export interface RetryCounts {
  retries: number;
  gaveUp: number;
}

/** @internal How retry policies report into their families. */
export const retryMetrics: KindMetrics<Retry, RetryCounts> = {
  families: Object.values(retryFamilies),
  counts: () => ({ retries: 0, gaveUp: 0 }),
  add(c, retry) {
    const s = retry.stats();
    c.retries += s.retries;
    c.gaveUp += s.gaveUp;
  },
  addCounts(c, other) {
    c.retries += other.retries;
    c.gaveUp += other.gaveUp;
  },
  isEmpty: (c) => c.retries + c.gaveUp === 0,
  series(sink, name, key, c) {
    const labels = { name, key };
    sink.add(retryFamilies.retries, labels, c.retries);
    sink.add(retryFamilies.gaveUp, labels, c.gaveUp);
  },
};
