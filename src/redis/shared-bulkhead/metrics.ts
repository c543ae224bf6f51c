import { bulkheadFamilies } from '../../policies/bulkhead/metrics.js';
import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { RedisBulkhead } from './RedisBulkhead.js';

/**
 * The metric families of Redis bulkheads: those of the in-memory bulkhead (one family each,
 * whichever bulkhead writes it; in-flight and queue figures are this process's), and the
 * bulkhead's use of Redis.
 */
export const redisBulkheadFamilies = {
  inFlight: bulkheadFamilies.inFlight,
  queueLength: bulkheadFamilies.queueLength,
  maxConcurrent: bulkheadFamilies.maxConcurrent,
  admitted: bulkheadFamilies.admitted,
  rejections: bulkheadFamilies.rejections,
  storeAvailable: {
    name: 'breakwater_redis_bulkhead_store_available',
    type: 'gauge',
    help: 'Whether Redis answers a Redis bulkhead (1), or it admits by onStoreFailure (0).',
    labels: ['name', 'key'],
    unit: '1',
    otel: { name: 'breakwater.redis_bulkhead.store_available', kind: 'gauge' },
  },
  roundTrips: {
    name: 'breakwater_redis_bulkhead_round_trips_total',
    type: 'counter',
    help: 'Script calls of a Redis bulkhead sent to Redis (acquire, release, renewal).',
    labels: ['name', 'key'],
    unit: '{request}',
    otel: { name: 'breakwater.redis_bulkhead.round_trips', kind: 'counter' },
  },
  fallbackAdmissions: {
    name: 'breakwater_redis_bulkhead_fallback_admissions_total',
    type: 'counter',
    help: 'Permits of a Redis bulkhead granted by onStoreFailure while Redis did not answer.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.redis_bulkhead.fallback_admissions', kind: 'counter' },
  },
  permitsLost: {
    name: 'breakwater_redis_bulkhead_permits_lost_total',
    type: 'counter',
    help: 'Permits of a Redis bulkhead whose lease ended while their call held them.',
    labels: ['name', 'key'],
    unit: '{permit}',
    otel: { name: 'breakwater.redis_bulkhead.permits_lost', kind: 'counter' },
  },
  liveInstances: {
    name: 'breakwater_redis_bulkhead_live_instances',
    type: 'gauge',
    help: 'Processes sharing a Redis bulkhead that were live at its last reply from Redis.',
    labels: ['name', 'key'],
    unit: '{instance}',
    otel: { name: 'breakwater.redis_bulkhead.live_instances', kind: 'gauge' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one Redis bulkhead series (or of several summed). */
export interface RedisBulkheadCounts {
  inFlight: number;
  queueLength: number;
  maxConcurrent: number;
  admitted: number;
  rejectedFull: number;
  rejectedQueueTimeout: number;
  roundTrips: number;
  fallbackAdmissions: number;
  permitsLost: number;
  liveInstances: number;
  /** Bulkheads summed whose store answers. */
  available: number;
}

const f = redisBulkheadFamilies;

/** @internal How Redis bulkheads report into their families. */
export const redisBulkheadMetrics: KindMetrics<RedisBulkhead, RedisBulkheadCounts> = {
  families: Object.values(f),
  counts: () => ({
    inFlight: 0,
    queueLength: 0,
    maxConcurrent: 0,
    admitted: 0,
    rejectedFull: 0,
    rejectedQueueTimeout: 0,
    roundTrips: 0,
    fallbackAdmissions: 0,
    permitsLost: 0,
    liveInstances: 0,
    available: 0,
  }),
  add(c, b) {
    const s = b.stats();
    c.inFlight += s.inFlight;
    c.queueLength += s.queueLength;
    c.maxConcurrent = s.maxConcurrent;
    c.admitted += s.admitted;
    c.rejectedFull += s.rejectionsByReason.full;
    c.rejectedQueueTimeout += s.rejectionsByReason.queueTimeout;
    c.roundTrips += s.roundTrips;
    c.fallbackAdmissions += s.fallbackAdmissions;
    c.permitsLost += s.permitsLost;
    c.liveInstances = s.liveInstances;
    if (s.storeAvailable) c.available++;
  },
  addCounts(c, o) {
    c.inFlight += o.inFlight;
    c.queueLength += o.queueLength;
    c.maxConcurrent = o.maxConcurrent;
    c.admitted += o.admitted;
    c.rejectedFull += o.rejectedFull;
    c.rejectedQueueTimeout += o.rejectedQueueTimeout;
    c.roundTrips += o.roundTrips;
    c.fallbackAdmissions += o.fallbackAdmissions;
    c.permitsLost += o.permitsLost;
    c.liveInstances = o.liveInstances;
    c.available += o.available;
  },
  isEmpty: (c) => c.admitted + c.rejectedFull + c.rejectedQueueTimeout + c.roundTrips === 0,
  series(sink, name, key, c) {
    const labels = { name, key };
    sink.add(f.inFlight, labels, c.inFlight);
    sink.add(f.queueLength, labels, c.queueLength);
    sink.add(f.maxConcurrent, labels, c.maxConcurrent);
    sink.add(f.admitted, labels, c.admitted);
    sink.add(f.rejections, { name, key, reason: 'full' }, c.rejectedFull);
    sink.add(f.rejections, { name, key, reason: 'queue-timeout' }, c.rejectedQueueTimeout);
    sink.add(f.storeAvailable, labels, c.available);
    sink.add(f.roundTrips, labels, c.roundTrips);
    sink.add(f.fallbackAdmissions, labels, c.fallbackAdmissions);
    sink.add(f.permitsLost, labels, c.permitsLost);
    sink.add(f.liveInstances, labels, c.liveInstances);
  },
};
