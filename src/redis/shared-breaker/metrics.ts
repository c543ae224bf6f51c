import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { RedisBreakerSignals } from './RedisBreakerSignals.js';

/** The metric families of shared breaker signals. */
export const sharedSignalsFamilies = {
  sharedOpen: {
    name: 'breakwater_shared_breaker_open',
    type: 'gauge',
    help: 'Whether the shared state of a breaker is open (a quorum of instances reported open), as this instance knows it.',
    labels: ['name', 'key'],
    unit: '1',
    otel: { name: 'breakwater.shared_breaker.open', kind: 'gauge' },
  },
  storeAvailable: {
    name: 'breakwater_shared_breaker_store_available',
    type: 'gauge',
    help: 'Whether Redis answers the shared signals of a breaker (1), or the breaker decides alone (0).',
    labels: ['name', 'key'],
    unit: '1',
    otel: { name: 'breakwater.shared_breaker.store_available', kind: 'gauge' },
  },
  roundTrips: {
    name: 'breakwater_shared_breaker_round_trips_total',
    type: 'counter',
    help: 'Scripts the shared signals of a breaker sent to Redis: reports, leases, outcomes, polls.',
    labels: ['name', 'key'],
    unit: '{request}',
    otel: { name: 'breakwater.shared_breaker.round_trips', kind: 'counter' },
  },
  heldOpen: {
    name: 'breakwater_shared_breaker_held_open_total',
    type: 'counter',
    help: 'Times the shared state held a breaker open that was closed or half-open.',
    labels: ['name', 'key'],
    unit: '{transition}',
    otel: { name: 'breakwater.shared_breaker.held_open', kind: 'counter' },
  },
  storeFailures: {
    name: 'breakwater_shared_breaker_store_failures_total',
    type: 'counter',
    help: 'Redis operations of the shared signals of a breaker that failed or passed their deadline.',
    labels: ['name', 'key'],
    unit: '{request}',
    otel: { name: 'breakwater.shared_breaker.store_failures', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one series of shared signals (or of several summed). */
export interface SharedSignalsCounts {
  open: number;
  available: number;
  roundTrips: number;
  heldOpen: number;
  storeFailures: number;
}

const { sharedOpen, storeAvailable, roundTrips, heldOpen, storeFailures } = sharedSignalsFamilies;

/** @internal How shared signals report into their families. */
export const sharedSignalsMetrics: KindMetrics<RedisBreakerSignals, SharedSignalsCounts> = {
  families: Object.values(sharedSignalsFamilies),
  counts: () => ({ open: 0, available: 0, roundTrips: 0, heldOpen: 0, storeFailures: 0 }),
  add(c, signals) {
    const s = signals.stats();
    if (s.sharedOpen) c.open++;
    if (s.storeAvailable) c.available++;
    c.roundTrips += s.roundTrips;
    c.heldOpen += s.heldOpen;
    c.storeFailures += s.storeFailures;
  },
  addCounts(c, other) {
    c.open += other.open;
    c.available += other.available;
    c.roundTrips += other.roundTrips;
    c.heldOpen += other.heldOpen;
    c.storeFailures += other.storeFailures;
  },
  isEmpty: (c) => c.roundTrips === 0,
  series(sink, name, key, c) {
    sink.add(sharedOpen, { name, key }, c.open);
    sink.add(storeAvailable, { name, key }, c.available);
    sink.add(roundTrips, { name, key }, c.roundTrips);
    sink.add(heldOpen, { name, key }, c.heldOpen);
    sink.add(storeFailures, { name, key }, c.storeFailures);
  },
};
