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
import Bottleneck from 'bottleneck';
import * as cockatiel4 from 'cockatiel';
import * as cockatiel3 from 'cockatiel3';
import Opossum from 'opossum';
import pRetry from 'p-retry';
import { RateLimiterMemory } from 'rate-limiter-flexible';

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
  ];
}
