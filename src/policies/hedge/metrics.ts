import { counter, declareMetrics } from '../../telemetry/declareMetrics.js';
import type { Hedge } from './Hedge.js';

/** Counts of one hedge series. */
export interface HedgeCounts {
  calls: number;
  hedges: number;
  won: number;
  refused: number;
}

const declared = declareMetrics<Hedge, HedgeCounts, keyof HedgeCounts>({
  prefix: 'hedge',
  readings: {
    calls: counter('{call}', 'Calls that ran through a hedge policy.'),
    hedges: counter('{attempt}', 'Hedges a hedge policy started (attempts beyond the first).'),
    won: counter(
      '{call}',
      'Calls whose outcome came from a hedge rather than from their first attempt.',
    ),
    refused: counter('{attempt}', 'Hedges a retry budget refused.'),
  },
});

/** The metric families of hedge policies. */
export const hedgeFamilies = declared.families;
/** @internal How hedge policies report into their families. */
export const hedgeMetrics = declared.metrics;
