import { counter, declareMetrics } from '../../telemetry/declareMetrics.js';
import type { RateLimiter } from './RateLimiter.js';

/** Counts of one rate limiter series. */
export interface RateLimiterCounts {
  admitted: number;
  rejected: number;
}

const declared = declareMetrics<RateLimiter, RateLimiterCounts, 'permits'>({
  prefix: 'rate_limiter',
  readings: {
    permits: counter('{permit}', 'Permit requests of a rate limiter, by result.', {
      label: 'result',
      fields: { admitted: 'admitted', rejected: 'rejected' },
    }),
  },
  read: (c, limiter) => limiter.addCounts(c),
});

/** The metric families of rate limiters. */
export const rateLimiterFamilies = declared.families;
/** @internal How rate limiters report into their families. */
export const rateLimiterMetrics = declared.metrics;
