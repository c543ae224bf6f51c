import type { DurationString } from '../protocol/kind.js';
import { onlyArguments } from '../validation/validate.js';
import { AdaptiveLimit } from './adaptive-limit/AdaptiveLimit.js';
import type { AdaptiveLimitOptions } from './adaptive-limit/options.js';
import { Bulkhead } from './bulkhead/Bulkhead.js';

/** The chaos kind's factory lives in its folder; the factories of every kind are here too. */
export { chaos } from './chaos/Chaos.js';

import type { BulkheadOptions } from './bulkhead/options.js';
import { CircuitBreaker } from './circuit-breaker/CircuitBreaker.js';
import type { CircuitBreakerOptions } from './circuit-breaker/options.js';
import { Coalescer } from './coalesce/Coalescer.js';
import type { CoalesceOptions } from './coalesce/options.js';
import { Fallback } from './fallback/Fallback.js';
import type { FallbackOptions } from './fallback/options.js';
import { Hedge } from './hedge/Hedge.js';
import type { HedgeOptions } from './hedge/options.js';
import { LoadShedder } from './load-shedder/LoadShedder.js';
import type { LoadShedderOptions } from './load-shedder/options.js';
import type { RateLimiterOptions } from './rate-limiter/options.js';
import { RateLimiter } from './rate-limiter/RateLimiter.js';
import type { RetryOptions } from './retry/options.js';
import { Retry } from './retry/Retry.js';
import type { RetryBudgetOptions } from './retry-budget/options.js';
import { RetryBudget } from './retry-budget/RetryBudget.js';
import type { TimeoutOptions } from './timeout/options.js';
import { Timeout } from './timeout/Timeout.js';

/**
 * A new {@link CircuitBreaker}, typed by the result of the calls it guards when `T` is given or
 * inferred from an annotated `handleResult`.
 * @example `const breaker = circuitBreaker({ breakDuration: 5_000 });`
 */
export function circuitBreaker<T = unknown>(options?: CircuitBreakerOptions<T>): CircuitBreaker<T> {
  onlyArguments(arguments, 1, 'circuitBreaker()');
  return new CircuitBreaker(options);
}

/**
 * A new {@link Retry}, typed by the result of the calls it retries when `T` is given or
 * inferred from an annotated `handleResult`.
 * @example `const r = retry<Response>({ handleResult: (r) => r.status >= 500 });`
 */
export function retry<T = unknown>(options?: RetryOptions<T>): Retry<T> {
  onlyArguments(arguments, 1, 'retry()');
  return new Retry(options);
}

/**
 * A new {@link RetryBudget}, to share among the retry (and hedging) policies that call one
 * dependency. @example `const budget = retryBudget(); retry({ maxAttempts: 4, budget })`
 */
export function retryBudget(options?: RetryBudgetOptions): RetryBudget {
  onlyArguments(arguments, 1, 'retryBudget()');
  return new RetryBudget(options);
}

/**
 * A new {@link Timeout}: a number is the timeout in ms, a string the timeout with its unit.
 * @example `timeout(2_000)`, `timeout('2s')`
 */
export function timeout(options: number | DurationString | TimeoutOptions): Timeout {
  onlyArguments(arguments, 1, 'timeout()');
  return new Timeout(options);
}

/** A new {@link Bulkhead}: a number is `maxConcurrent`. @example `bulkhead({ maxConcurrent: 8, maxQueue: 32 })` */
export function bulkhead(options?: number | BulkheadOptions): Bulkhead {
  onlyArguments(arguments, 1, 'bulkhead()');
  return new Bulkhead(options);
}

/** A new {@link Fallback}. @example `fallback({ action: ({ error }) => cached.get(key) })` */
export function fallback<T, R = unknown>(options: FallbackOptions<T, R>): Fallback<T, R> {
  onlyArguments(arguments, 1, 'fallback()');
  return new Fallback(options);
}

/** A new {@link RateLimiter}. @example `rateLimiter({ limit: 100, period: 1_000, burst: 20 })` */
export function rateLimiter(options: RateLimiterOptions): RateLimiter {
  onlyArguments(arguments, 1, 'rateLimiter()');
  return new RateLimiter(options);
}

/**
 * A new {@link LoadShedder} (client-side adaptive throttling), typed by the result of the calls
 * it guards when `T` is given or inferred from an annotated `handleResult`.
 * @example `loadShedder({ k: 2, handleResult: (r: Response) => r.status === 503 })`
 */
export function loadShedder<T = unknown>(options?: LoadShedderOptions<T>): LoadShedder<T> {
  onlyArguments(arguments, 1, 'loadShedder()');
  return new LoadShedder(options);
}

/**
 * A new {@link Coalescer}, typed by the result of the calls it shares when `T` is given or
 * inferred from an annotated `share`.
 * @example `pipeline(coalesce({ share: (r: Response) => r.clone() }), timeout(2_000))`
 */
export function coalesce<T = unknown>(options?: CoalesceOptions<T>): Coalescer<T> {
  onlyArguments(arguments, 1, 'coalesce()');
  return new Coalescer(options);
}

/**
 * A new {@link Hedge}, typed by the result of the calls it hedges when `T` is given or
 * inferred from an annotated `handleResult`.
 * @example `pipeline(hedge({ delay: { percentile: 0.95 }, maxHedges: 1 }), timeout(2_000))`
 */
export function hedge<T = unknown>(options?: HedgeOptions<T>): Hedge<T> {
  onlyArguments(arguments, 1, 'hedge()');
  return new Hedge(options);
}

/**
 * A new {@link AdaptiveLimit} (an adaptive concurrency limit), typed by the result of the calls
 * it guards when `T` is given or inferred from an annotated `handleResult`.
 * @example `adaptiveLimit({ handleResult: (r: Response) => r.status === 503 || r.status === 429 })`
 */
export function adaptiveLimit<T = unknown>(options?: AdaptiveLimitOptions<T>): AdaptiveLimit<T> {
  onlyArguments(arguments, 1, 'adaptiveLimit()');
  return new AdaptiveLimit(options);
}
