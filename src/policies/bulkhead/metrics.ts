import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { Bulkhead } from './Bulkhead.js';

/** The metric families of bulkheads. */
export const bulkheadFamilies = {
  inFlight: {
    name: 'breakwater_bulkhead_in_flight',
    type: 'gauge',
    help: 'Calls in flight.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.in_flight', kind: 'upDownCounter' },
  },
  queueLength: {
    name: 'breakwater_bulkhead_queue_length',
    type: 'gauge',
    help: 'Calls waiting in the queue.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.queue_length', kind: 'upDownCounter' },
  },
  maxConcurrent: {
    name: 'breakwater_bulkhead_max_concurrent',
    type: 'gauge',
    help: 'Calls allowed in flight at once.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.max_concurrent', kind: 'upDownCounter' },
  },
  admitted: {
    name: 'breakwater_bulkhead_admitted_total',
    type: 'counter',
    help: 'Calls a bulkhead admitted.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.admitted', kind: 'counter' },
  },
  rejections: {
    name: 'breakwater_bulkhead_rejections_total',
    type: 'counter',
    help: 'Calls a bulkhead refused, by reason.',
    labels: ['name', 'key', 'reason'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.rejections', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/**
 * Counts of one bulkhead series. `maxConcurrent` is not summed: a sum of keys
 * reports the limit of their name. `codel` is true when one of them has (or had) a CoDel
 * queue: only those report a `reason="codel"` series.
 */
export interface BulkheadCounts {
  inFlight: number;
  queueLength: number;
  maxConcurrent: number;
  admitted: number;
  rejectedFull: number;
  rejectedQueueTimeout: number;
  rejectedCodel: number;
  codel: boolean;
}

const f = bulkheadFamilies;

/** @internal How bulkheads report into their families. */
export const bulkheadMetrics: KindMetrics<Bulkhead, BulkheadCounts> = {
  families: Object.values(f),
  enabled: (b) => b.metrics.enabled,
  latency: (b) => b.latency,
  counts: () => ({
    inFlight: 0,
    queueLength: 0,
    maxConcurrent: 0,
    admitted: 0,
    rejectedFull: 0,
    rejectedQueueTimeout: 0,
    rejectedCodel: 0,
    codel: false,
  }),
  add(c, b) {
    b.addCounts(c);
    c.maxConcurrent = b.maxConcurrent;
    if (b.queueDiscipline === 'codel') c.codel = true;
  },
  addCounts(c, other) {
    c.inFlight += other.inFlight;
    c.queueLength += other.queueLength;
    c.admitted += other.admitted;
    c.rejectedFull += other.rejectedFull;
    c.rejectedQueueTimeout += other.rejectedQueueTimeout;
    c.rejectedCodel += other.rejectedCodel;
    if (other.codel) c.codel = true;
    c.maxConcurrent = other.maxConcurrent;
  },
  isEmpty: (c) => c.admitted + c.rejectedFull + c.rejectedQueueTimeout + c.rejectedCodel === 0,
  series(sink, name, key, c) {
    const labels = { name, key };
    sink.add(f.inFlight, labels, c.inFlight);
    sink.add(f.queueLength, labels, c.queueLength);
    sink.add(f.maxConcurrent, labels, c.maxConcurrent);
    sink.add(f.admitted, labels, c.admitted);
    sink.add(f.rejections, { name, key, reason: 'full' }, c.rejectedFull);
    sink.add(f.rejections, { name, key, reason: 'queue-timeout' }, c.rejectedQueueTimeout);
    if (c.codel || c.rejectedCodel > 0) {
      sink.add(f.rejections, { name, key, reason: 'codel' }, c.rejectedCodel);
    }
  },
};
