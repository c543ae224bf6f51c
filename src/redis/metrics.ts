import { rateLimiterFamilies } from '../policies/rate-limiter/metrics.js';
import type { KindMetrics } from '../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../telemetry/metricFamily.js';
import type { RedisRateLimiter } from './RedisRateLimiter.js';

/**
 * The metric families of Redis rate limiters: the permits family of the in-memory limiter
 * (one family, whichever limiter writes it), and the limiter's use of Redis.
 */
export const redisRateLimiterFamilies = {
  permits: rateLimiterFamilies.permits,
  storeAvailable: {
    name: 'breakwater_redis_rate_limiter_store_available',
    type: 'gauge',
    help: 'Whether Redis answers a Redis rate limiter (1), or it decides by onStoreFailure (0).',
    labels: ['name', 'key'],
    unit: '1',
    otel: { name: 'breakwater.redis_rate_limiter.store_available', kind: 'gauge' },
  },
  roundTrips: {
    name: 'breakwater_redis_rate_limiter_round_trips_total',
    type: 'counter',
    help: 'Decisions of a Redis rate limiter sent to Redis.',
    labels: ['name', 'key'],
    unit: '{request}',
    otel: { name: 'breakwater.redis_rate_limiter.round_trips', kind: 'counter' },
  },
  fallbackDecisions: {
    name: 'breakwater_redis_rate_limiter_fallback_decisions_total',
    type: 'counter',
    help: 'Decisions of a Redis rate limiter made by onStoreFailure: failed ones, and all while Redis was away.',
    labels: ['name', 'key'],
    unit: '{decision}',
    otel: { name: 'breakwater.redis_rate_limiter.fallback_decisions', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one Redis rate limiter series (or of several summed). */
export interface RedisRateLimiterCounts {
  admitted: number;
  rejected: number;
  roundTrips: number;
  fallbackDecisions: number;
  /** Limiters summed whose store answers. */
  available: number;
}

const { permits, storeAvailable, roundTrips, fallbackDecisions } = redisRateLimiterFamilies;

/** @internal How Redis rate limiters report into their families. */
export const redisRateLimiterMetrics: KindMetrics<RedisRateLimiter, RedisRateLimiterCounts> = {
  families: Object.values(redisRateLimiterFamilies),
  counts: () => ({ admitted: 0, rejected: 0, roundTrips: 0, fallbackDecisions: 0, available: 0 }),
  add(c, limiter) {
    const s = limiter.stats();
    c.admitted += s.admitted;
    c.rejected += s.rejected;
    c.roundTrips += s.roundTrips;
    c.fallbackDecisions += s.fallbackDecisions;
    if (s.storeAvailable) c.available++;
  },
  addCounts(c, other) {
    c.admitted += other.admitted;
    c.rejected += other.rejected;
    c.roundTrips += other.roundTrips;
    c.fallbackDecisions += other.fallbackDecisions;
    c.available += other.available;
  },
  isEmpty: (c) => c.admitted + c.rejected + c.roundTrips + c.fallbackDecisions === 0,
  series(sink, name, key, c) {
    sink.add(permits, { name, key, result: 'admitted' }, c.admitted);
    sink.add(permits, { name, key, result: 'rejected' }, c.rejected);
    sink.add(storeAvailable, { name, key }, c.available);
    sink.add(roundTrips, { name, key }, c.roundTrips);
    sink.add(fallbackDecisions, { name, key }, c.fallbackDecisions);
  },
};
