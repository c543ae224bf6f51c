/**
 * The peer libraries and the one place where each is configured. Every scenario builds its
 * peer policies with these factories, and the report prints their source text, so what the doc
 * shows is exactly what ran.
 *
 * Equivalence with breakwater's rows (see pipelines.mjs): consecutive-failure breakers of 5
 * with a 10 s break, 3 retries with exponential backoff from 100 ms (cockatiel's default
 * starts at 128 ms), 1000 ms timeouts, bulkheads of 100 without a queue, no event listeners
 * attached. opossum has no consecutive-failure window, no standalone timeout and no standalone
 * bulkhead: its rows always include its breaker (rolling 10 s window, 50 % error threshold),
 * and its internal statistics listeners cannot be turned off.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Bottleneck from 'bottleneck';
import * as cockatiel4 from 'cockatiel';
import * as cockatiel3 from 'cockatiel3';
import Opossum from 'opossum';
import pRetry from 'p-retry';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { httpConfigs } from './http.mjs';

export { pRetry };

/** Row `library` names. */
export const LIB = {
  breakwater: 'breakwater',
  cockatiel4: 'cockatiel 4',
  cockatiel3: 'cockatiel 3',
  opossum: 'opossum',
  pRetry: 'p-retry',
  opossumPRetry: 'opossum + p-retry',
  rlflex: 'rate-limiter-flexible',
  bottleneck: 'bottleneck',
};

/** Both cockatiel lines, measured side by side with the same factories. */
export const COCKATIELS = [
  { library: LIB.cockatiel4, ck: cockatiel4 },
  { library: LIB.cockatiel3, ck: cockatiel3 },
];

// ---- factories: keep the option values literal, their source is printed in the doc ---------

export const ckBreaker = (ck) =>
  ck.circuitBreaker(ck.handleAll, { halfOpenAfter: 10_000, breaker: new ck.ConsecutiveBreaker(5) });

/** cockatiel's `maxAttempts` counts retries: 3 retries, 4 attempts in all. */
export const ckRetry = (ck) =>
  ck.retry(ck.handleAll, { maxAttempts: 3, backoff: new ck.ExponentialBackoff() });

export const ckTimeout = (ck, strategy) =>
  ck.timeout(
    1000,
    strategy === 'aggressive' ? ck.TimeoutStrategy.Aggressive : ck.TimeoutStrategy.Cooperative,
  );

export const ckBulkhead = (ck) => ck.bulkhead(100);

/** Outer to inner: retry, breaker, bulkhead, timeout (cooperative). */
export const ckComposed = (ck) =>
  ck.wrap(ckRetry(ck), ckBreaker(ck), ckBulkhead(ck), ckTimeout(ck, 'cooperative'));

/** Breaker for an open-breaker row: tripped by 5 failures, break far longer than the run. */
export const ckOpenBreaker = (ck) =>
  ck.circuitBreaker(ck.handleAll, {
    halfOpenAfter: 2_147_483_647,
    breaker: new ck.ConsecutiveBreaker(5),
  });

/** Closed breaker without opossum's per-call timer. */
export const opBreaker = (action) => new Opossum(action, { timeout: false, resetTimeout: 10_000 });

/** opossum as it comes: among its defaults, a `timeout` of 10 s arms a timer on every call. */
export const opBreakerDefaults = (action) => new Opossum(action);

/** opossum's timeout (breaker included: it has no standalone timeout). */
export const opTimeout = (action) => new Opossum(action, { timeout: 1000, resetTimeout: 10_000 });

/** opossum's `capacity` (breaker included: it has no standalone bulkhead). */
export const opBulkhead = (action) =>
  new Opossum(action, { timeout: false, capacity: 100, resetTimeout: 10_000 });

/** The breaker of the composed opossum row; p-retry drives it (see PRETRY_OPTIONS). */
export const opComposed = (action) =>
  new Opossum(action, { timeout: 1000, capacity: 100, resetTimeout: 10_000 });

/** Breaker for an open-breaker row: tripped by one failure, break far longer than the run. */
export const opOpenBreaker = (action) =>
  new Opossum(action, { timeout: false, resetTimeout: 2_147_483_647 });

/** 3 retries (4 attempts), exponential backoff from 100 ms; one object for every call. */
export const PRETRY_OPTIONS = { retries: 3, factor: 2, minTimeout: 100 };

/** So many points that the limit is never reached: every call gets its permit. */
export const rlflexLimiter = () => new RateLimiterMemory({ points: 1e12, duration: 3600 });

export const bottleneckLimiter = () => new Bottleneck({ maxConcurrent: 100, minTime: 0 });

// ---- rate limiters: breakwater's side, and the Redis limiters --------------------------------
// breakwater's rate limiters are configured here rather than in pipelines.mjs, with the
// module passed in (as cockatiel's is): breakwater.mjs does not export them.

/**
 * A module of the library's build, from the copy of dist/ the runner made for this run (or
 * dist/ itself when a scenario runs alone), as breakwater.mjs loads it.
 */
export function breakwaterModule(name) {
  const snapshot = process.env.BREAKWATER_DIST;
  return import(
    snapshot
      ? pathToFileURL(join(snapshot, name)).href
      : new URL(`../../dist/${name}`, import.meta.url).href
  );
}

/**
 * So many permits that the limit is never reached during a run: a million per second, and a
 * burst of two billion (at about 10 ns per call a process takes about 10^8 per second).
 */
export const bwRateLimiter = ({ RateLimiter }) =>
  new RateLimiter({ limit: 1_000_000, period: 1_000, burst: 2_000_000_000 });

/** The same rate per key, with room for the 100,000 keys the keyed rows cycle over. */
export const bwKeyedRateLimiter = ({ KeyedRateLimiter }) =>
  new KeyedRateLimiter({
    limit: 1_000_000,
    period: 1_000,
    burst: 2_000_000_000,
    maxKeys: 100_000,
  });

/**
 * The ioredis client both libraries' Redis limiters use: fail at once while disconnected (no
 * offline queue, no resending); `enableAutoPipelining` sends the commands issued in one turn
 * of the event loop in one write.
 */
export const redisClient = (Redis, port, enableAutoPipelining) =>
  new Redis({
    host: '127.0.0.1',
    port,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    enableAutoPipelining,
  });

/**
 * 100 per second per key: never reached by the rows that cycle over many keys. The decision
 * deadline (20 ms by default) is raised so that a busy machine never makes a row measure the
 * local fallback instead of Redis; the rows check that no decision fell back.
 */
export const bwRedisLimiter = ({ RedisRateLimiter }, client) =>
  new RedisRateLimiter({ client, name: 'bench', limit: 100, period: 1_000, timeout: 1_000 });

/** rate-limiter-flexible's Redis limiter with the same 100 per second (a fixed window of 1 s). */
export const rlflexRedisLimiter = (storeClient) =>
  new RateLimiterRedis({
    storeClient,
    useRedisPackage: false,
    keyPrefix: 'rlflx',
    points: 100,
    duration: 1,
  });

/** A hot key at its limit of 100 per second, with the negative cache on or off. */
export const bwRedisHotLimiter = ({ RedisRateLimiter }, client, negativeCache) =>
  new RedisRateLimiter({
    client,
    name: 'hot',
    limit: 100,
    period: 1_000,
    timeout: 1_000,
    negativeCache,
  });

/**
 * The same key in rate-limiter-flexible: `inMemoryBlockOnConsumed: 100` (= points) with no
 * `inMemoryBlockDuration` blocks the key in memory, without a round trip, from the call that
 * uses its 100th point until its window ends: its counterpart of the negative cache. 0 is off.
 */
export const rlflexRedisHotLimiter = (storeClient, inMemoryBlockOnConsumed) =>
  new RateLimiterRedis({
    storeClient,
    useRedisPackage: false,
    keyPrefix: 'rlflx-hot',
    points: 100,
    duration: 1,
    inMemoryBlockOnConsumed,
  });

/**
 * A hot key below its limit: 1,000 per second with a burst of 1,000,000, so a key called
 * faster than its rate builds the backlog leases are taken on, and no call is refused during
 * a run. `lease: 1` is lease mode off.
 */
export const bwRedisLeaseLimiter = ({ RedisRateLimiter }, client, lease) =>
  new RedisRateLimiter({
    client,
    name: 'lease',
    limit: 1_000,
    period: 1_000,
    burst: 1_000_000,
    timeout: 1_000,
    lease,
  });

/** opossum keeps two 1 s intervals per breaker (bucket rotation, snapshots) until shut down. */
export function shutdown(breaker) {
  breaker.shutdown();
}

// ---- what the doc prints ---------------------------------------------------------------------

const src = (f) => f.toString().replace(/\s+/g, ' ');

/** The configuration of every peer row, as the source of the factory that built it. */
export function peerConfigs() {
  return [
    { library: 'cockatiel 4 / cockatiel 3', use: 'circuit breaker', source: src(ckBreaker) },
    { library: 'cockatiel 4 / cockatiel 3', use: 'open breaker', source: src(ckOpenBreaker) },
    { library: 'cockatiel 4 / cockatiel 3', use: 'retry', source: src(ckRetry) },
    { library: 'cockatiel 4 / cockatiel 3', use: 'timeout', source: src(ckTimeout) },
    { library: 'cockatiel 4 / cockatiel 3', use: 'bulkhead', source: src(ckBulkhead) },
    { library: 'cockatiel 4 / cockatiel 3', use: 'composed', source: src(ckComposed) },
    { library: 'opossum', use: 'circuit breaker', source: src(opBreaker) },
    {
      library: 'opossum',
      use: 'circuit breaker, all defaults (timeout 10 s, reset 30 s)',
      source: src(opBreakerDefaults),
    },
    { library: 'opossum', use: 'open breaker', source: src(opOpenBreaker) },
    { library: 'opossum', use: 'timeout (breaker included)', source: src(opTimeout) },
    { library: 'opossum', use: 'bulkhead (breaker included)', source: src(opBulkhead) },
    { library: 'opossum + p-retry', use: 'composed', source: src(opComposed) },
    {
      library: 'p-retry',
      use: 'retry; drives opossum in the composed row',
      source: `pRetry(fn, ${JSON.stringify(PRETRY_OPTIONS)})`,
    },
    { library: 'rate-limiter-flexible', use: 'rate limiter', source: src(rlflexLimiter) },
    { library: 'bottleneck', use: 'rate limiter', source: src(bottleneckLimiter) },
    ...rateLimiterConfigs(),
    ...httpConfigs(),
  ];
}

/** The rate limiters' configurations: breakwater's, the keyed and the Redis rows'. */
export function rateLimiterConfigs() {
  return [
    { library: 'breakwater', use: 'rate limiter', source: src(bwRateLimiter) },
    { library: 'breakwater', use: 'keyed rate limiter', source: src(bwKeyedRateLimiter) },
    {
      library: 'ioredis',
      use: 'Redis client of both libraries’ Redis rows',
      source: src(redisClient),
    },
    { library: 'breakwater', use: 'Redis rate limiter, many keys', source: src(bwRedisLimiter) },
    {
      library: 'rate-limiter-flexible',
      use: 'Redis rate limiter, many keys',
      source: src(rlflexRedisLimiter),
    },
    {
      library: 'breakwater',
      use: 'Redis rate limiter, hot key at its limit (negative cache on / off)',
      source: src(bwRedisHotLimiter),
    },
    {
      library: 'rate-limiter-flexible',
      use: 'Redis rate limiter, hot key at its limit (in-memory block 100 / off)',
      source: src(rlflexRedisHotLimiter),
    },
    {
      library: 'breakwater',
      use: 'Redis rate limiter, hot key below its limit (lease 10 / off)',
      source: src(bwRedisLeaseLimiter),
    },
  ];
}
