import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import type { Coalescer } from './Coalescer.js';

/** Counts of one coalescing series. */
export interface CoalesceCounts {
  calls: number;
  flights: number;
  coalesced: number;
  abandoned: number;
  inFlight: number;
}

const declared = declareMetrics<Coalescer, CoalesceCounts, keyof CoalesceCounts>({
  prefix: 'coalesce',
  readings: {
    calls: counter('{call}', 'Calls that reached a coalescing policy.'),
    flights: counter(
      '{flight}',
      'Runs of the inner work a coalescing policy started (one per flight).',
    ),
    coalesced: counter('{call}', 'Calls that joined a flight in progress rather than start one.'),
    abandoned: counter(
      '{flight}',
      'Flights every caller left before they settled, whose work was aborted.',
    ),
    inFlight: gauge('{flight}', 'Flights in progress now.'),
  },
});

/** The metric families of coalescing policies. */
export const coalesceFamilies = declared.families;
/** @internal How coalescing policies report into their families. */
export const coalesceMetrics = declared.metrics;
