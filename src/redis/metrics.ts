import { rateLimiterFamilies } from '../policies/rate-limiter/metrics.js';
import { counter, declareMetrics, gauge } from '../telemetry/declareMetrics.js';
import type { RedisRateLimiter } from './RedisRateLimiter.js';

/** Counts of one Redis rate limiter series (or of several summed). */
export interface RedisRateLimiterCounts {
  admitted: number;
  rejected: number;
  roundTrips: number;
  fallbackDecisions: number;
  /** Limiters summed whose store answers. */
  storeAvailable: number;
}

const declared = declareMetrics<
  RedisRateLimiter,
  RedisRateLimiterCounts,
  'permits' | 'storeAvailable' | 'roundTrips' | 'fallbackDecisions'
>({
  prefix: 'redis_rate_limiter',
  readings: {
    // One family with the in-memory limiter's, whichever limiter writes it.
    permits: {
      ...rateLimiterFamilies.permits,
      label: 'result',
      fields: { admitted: 'admitted', rejected: 'rejected' },
      family: rateLimiterFamilies.permits,
    },
    storeAvailable: gauge(
      '1',
      'Whether Redis answers a Redis rate limiter (1), or it decides by onStoreFailure (0).',
      { otelKind: 'gauge' },
    ),
    roundTrips: counter('{request}', 'Decisions of a Redis rate limiter sent to Redis.'),
    fallbackDecisions: counter(
      '{decision}',
      'Decisions of a Redis rate limiter made by onStoreFailure: failed ones, and all while Redis was away.',
    ),
  },
});

/**
 * The metric families of Redis rate limiters: the permits family of the in-memory limiter
 * (one family, whichever limiter writes it), and the limiter's use of Redis.
 */
export const redisRateLimiterFamilies = declared.families;
/** @internal How Redis rate limiters report into their families. */
export const redisRateLimiterMetrics = declared.metrics;
