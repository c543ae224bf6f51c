import { counter, declareMetrics } from '../../telemetry/declareMetrics.js';
import type { Timeout } from './Timeout.js';

/** Counts of one timeout series. */
export interface TimeoutCounts {
  timeouts: number;
}

const declared = declareMetrics<Timeout, TimeoutCounts, 'timeouts'>({
  prefix: 'timeout',
  readings: { timeouts: counter('{timeout}', 'Calls whose deadline passed.') },
});

/** The metric families of timeouts. */
export const timeoutFamilies = declared.families;
/** @internal How timeouts report into their families. */
export const timeoutMetrics = declared.metrics;
