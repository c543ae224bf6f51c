import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { RateLimiter } from './RateLimiter.js';

/** The metric families of rate limiters. */
export const rateLimiterFamilies = {
  permits: {
    name: 'breakwater_rate_limiter_permits_total',
    type: 'counter',
    help: 'Permit requests of a rate limiter, by result.',
    labels: ['name', 'key', 'result'],
    unit: '{permit}',
    otel: { name: 'breakwater.rate_limiter.permits', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one rate limiter series. */
export interface RateLimiterCounts {
  admitted: number;
  rejected: number;
}

const { permits } = rateLimiterFamilies;

/** @internal How rate limiters report into their families. */
export const rateLimiterMetrics: KindMetrics<RateLimiter, RateLimiterCounts> = {
  families: Object.values(rateLimiterFamilies),
  counts: () => ({ admitted: 0, rejected: 0 }),
  add: (c, limiter) => limiter.addCounts(c),
  addCounts(c, other) {
    c.admitted += other.admitted;
    c.rejected += other.rejected;
  },
  isEmpty: (c) => c.admitted + c.rejected === 0,
  series(sink, name, key, c) {
    sink.add(permits, { name, key, result: 'admitted' }, c.admitted);
    sink.add(permits, { name, key, result: 'rejected' }, c.rejected);
  },
};
