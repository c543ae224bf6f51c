import { defineKind } from '../protocol/defineKind.js';
import { POLICY_KIND } from '../protocol/kind.js';
import { AVAILABLE, codeOnlyRedisKind } from './codeOnlyKind.js';
import { type RedisRateLimiterCounts, redisRateLimiterMetrics } from './metrics.js';
import { RedisRateLimiter, type RedisRateLimiterStats } from './RedisRateLimiter.js';
import type { RedisRateLimiterOptions } from './rateLimiterOptions.js';

const IN_CODE =
  'a Redis rate limiter is built in code with its client (`new RedisRateLimiter({ client, ... })`) and added with `registry.register(name, limiter)`';

/**
 * The Redis rate limiter kind: registered limiters, and named ones built in code, show in
 * snapshots, `/health` (state `available`, or `fallback` while `onStoreFailure` decides:
 * degraded, never a reason for 503), metrics and the dashboard. Instances come from code only:
 * config data cannot give a client. A limiter carries its kind, so a registry learns it from
 * the first limiter it is handed; give it in `kinds` only to name the kind before that
 * (`registry.get(redisRateLimiterKind, name)`, the `redisRateLimiters` config section).
 *
 * @example
 * ```ts
 * const registry = new Registry();
 * registry.register('search', new RedisRateLimiter({ client, name: 'search', limit: 100 }));
 * ```
 */
export const redisRateLimiterKind = defineKind<
  RedisRateLimiter,
  RedisRateLimiterOptions,
  RedisRateLimiterCounts
>({
  name: 'redisRateLimiter',
  label: 'Redis rate limiter',
  section: 'redisRateLimiters',
  policy: RedisRateLimiter,
  ...codeOnlyRedisKind<RedisRateLimiter>(IN_CODE),
  metrics: redisRateLimiterMetrics,
  dashboard({ state, stats }) {
    const s = stats as RedisRateLimiterStats;
    return {
      calls: s.admitted,
      rejected: s.rejected,
      detail:
        `${state === AVAILABLE ? 'Redis answers' : 'Redis away: deciding by onStoreFailure'}, ` +
        `${s.roundTrips} round trips, ${s.fallbackDecisions} fallback decisions`,
    };
  },
});

// A registry learns the kind from a limiter it is handed, so `kinds` need not name it.
Object.defineProperty(RedisRateLimiter.prototype, POLICY_KIND, { value: redisRateLimiterKind });
