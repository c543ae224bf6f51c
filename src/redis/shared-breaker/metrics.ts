import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import type { RedisBreakerSignals } from './RedisBreakerSignals.js';

/** Counts of one series of shared signals (or of several summed). */
export interface SharedSignalsCounts {
  /** Signals summed whose shared state is open. */
  sharedOpen: number;
  /** Signals summed whose store answers. */
  storeAvailable: number;
  roundTrips: number;
  heldOpen: number;
  storeFailures: number;
}

const declared = declareMetrics<
  RedisBreakerSignals,
  SharedSignalsCounts,
  keyof SharedSignalsCounts
>({
  prefix: 'shared_breaker',
  readings: {
    sharedOpen: gauge(
      '1',
      'Whether the shared state of a breaker is open (a quorum of instances reported open), as this instance knows it.',
      { quantity: 'open', otelKind: 'gauge' },
    ),
    storeAvailable: gauge(
      '1',
      'Whether Redis answers the shared signals of a breaker (1), or the breaker decides alone (0).',
      { otelKind: 'gauge' },
    ),
    roundTrips: counter(
      '{request}',
      'Scripts the shared signals of a breaker sent to Redis: reports, leases, outcomes, polls.',
    ),
    heldOpen: counter(
      '{transition}',
      'Times the shared state held a breaker open that was closed or half-open.',
    ),
    storeFailures: counter(
      '{request}',
      'Redis operations of the shared signals of a breaker that failed or passed their deadline.',
    ),
  },
  isEmpty: (c) => c.roundTrips === 0,
});

/** The metric families of shared breaker signals. */
export const sharedSignalsFamilies = declared.families;
/** @internal How shared signals report into their families. */
export const sharedSignalsMetrics = declared.metrics;
