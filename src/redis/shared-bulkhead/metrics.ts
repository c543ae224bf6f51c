import { bulkheadFamilies } from '../../policies/bulkhead/metrics.js';
import {
  counter,
  declareMetrics,
  gauge,
  type MetricReading,
} from '../../telemetry/declareMetrics.js';
import type { RedisBulkhead } from './RedisBulkhead.js';

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
  storeAvailable: number;
}

type Reading =
  | 'inFlight'
  | 'queueLength'
  | 'maxConcurrent'
  | 'admitted'
  | 'rejections'
  | 'storeAvailable'
  | 'roundTrips'
  | 'fallbackAdmissions'
  | 'permitsLost'
  | 'liveInstances';

/** A reading of one of the in-memory bulkhead's families, which both kinds write. */
const shared = (key: keyof typeof bulkheadFamilies): MetricReading<RedisBulkheadCounts> => ({
  ...bulkheadFamilies[key],
  family: bulkheadFamilies[key],
});

const declared = declareMetrics<RedisBulkhead, RedisBulkheadCounts, Reading>({
  prefix: 'redis_bulkhead',
  readings: {
    inFlight: shared('inFlight'),
    queueLength: shared('queueLength'),
    maxConcurrent: shared('maxConcurrent'),
    admitted: shared('admitted'),
    rejections: {
      ...shared('rejections'),
      label: 'reason',
      fields: { full: 'rejectedFull', 'queue-timeout': 'rejectedQueueTimeout' },
    },
    storeAvailable: gauge(
      '1',
      'Whether Redis answers a Redis bulkhead (1), or it admits by onStoreFailure (0).',
      { otelKind: 'gauge' },
    ),
    roundTrips: counter(
      '{request}',
      'Script calls of a Redis bulkhead sent to Redis (acquire, release, renewal).',
    ),
    fallbackAdmissions: counter(
      '{call}',
      'Permits of a Redis bulkhead granted by onStoreFailure while Redis did not answer.',
    ),
    permitsLost: counter(
      '{permit}',
      'Permits of a Redis bulkhead whose lease ended while their call held them.',
    ),
    liveInstances: gauge(
      '{instance}',
      'Processes sharing a Redis bulkhead that were live at its last reply from Redis.',
      { otelKind: 'gauge' },
    ),
  },
  combine: { maxConcurrent: 'last', liveInstances: 'last' },
  read(c, b) {
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
    if (s.storeAvailable) c.storeAvailable++;
  },
  isEmpty: (c) => c.admitted + c.rejectedFull + c.rejectedQueueTimeout + c.roundTrips === 0,
});

/**
 * The metric families of Redis bulkheads: those of the in-memory bulkhead (one family each,
 * whichever bulkhead writes it; in-flight and queue figures are this process's), and the
 * bulkhead's use of Redis.
 */
export const redisBulkheadFamilies = declared.families;
/** @internal How Redis bulkheads report into their families. */
export const redisBulkheadMetrics = declared.metrics;
