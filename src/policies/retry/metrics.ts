import { counter, declareMetrics } from '../../telemetry/declareMetrics.js';
import type { Retry } from './Retry.js';

/** Counts of one retry series. */
export interface RetryCounts {
  retries: number;
  gaveUp: number;
}

const declared = declareMetrics<Retry, RetryCounts, keyof RetryCounts>({
  prefix: 'retry',
  readings: {
    retries: counter('{retry}', 'Retries a retry policy decided.'),
    gaveUp: counter(
      '{call}',
      'Calls a retry policy gave up on: attempts or time used up, or a failure it does not retry after a retry.',
    ),
  },
});

/** The metric families of retry policies. */
export const retryFamilies = declared.families;
/** @internal How retry policies report into their families. */
export const retryMetrics = declared.metrics;
