import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import type { Bulkhead } from './Bulkhead.js';

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

type Reading = 'inFlight' | 'queueLength' | 'maxConcurrent' | 'admitted' | 'rejections';

const declared = declareMetrics<Bulkhead, BulkheadCounts, Reading>({
  prefix: 'bulkhead',
  readings: {
    inFlight: gauge('{call}', 'Calls in flight.'),
    queueLength: gauge('{call}', 'Calls waiting in the queue.'),
    maxConcurrent: gauge('{call}', 'Calls allowed in flight at once.'),
    admitted: counter('{call}', 'Calls a bulkhead admitted.'),
    rejections: counter('{call}', 'Calls a bulkhead refused, by reason.', {
      label: 'reason',
      fields: {
        full: 'rejectedFull',
        'queue-timeout': 'rejectedQueueTimeout',
        codel: 'rejectedCodel',
      },
      shows: (c, reason) => reason !== 'codel' || c.codel || c.rejectedCodel > 0,
    }),
  },
  combine: { maxConcurrent: 'last' },
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
  read(c, b) {
    b.addCounts(c);
    c.maxConcurrent = b.maxConcurrent;
    if (b.queueDiscipline === 'codel') c.codel = true;
  },
  enabled: (b) => b.metrics.enabled,
  latency: (b) => b.latency,
});

/** The metric families of bulkheads. */
export const bulkheadFamilies = declared.families;
/** @internal How bulkheads report into their families. */
export const bulkheadMetrics = declared.metrics;
