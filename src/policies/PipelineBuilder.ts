import { Pipeline, type Policy } from '../pipeline/Pipeline.js';
import type { DurationString } from '../protocol/kind.js';
import type { FallbackValueOf } from '../protocol/result.js';
import { Bulkhead } from './bulkhead/Bulkhead.js';
import type { BulkheadOptions } from './bulkhead/options.js';
import { CircuitBreaker } from './circuit-breaker/CircuitBreaker.js';
import type { CircuitBreakerOptions } from './circuit-breaker/options.js';
import { Fallback } from './fallback/Fallback.js';
import type { FallbackOptions } from './fallback/options.js';
import type { RateLimiterOptions } from './rate-limiter/options.js';
import { RateLimiter } from './rate-limiter/RateLimiter.js';
import type { RetryOptions } from './retry/options.js';
import { Retry } from './retry/Retry.js';
import type { TimeoutOptions } from './timeout/options.js';
import { Timeout } from './timeout/Timeout.js';

/**
 * Builds a {@link Pipeline} step by step; each call adds a policy inside the ones before it
 * (outer-to-inner in the order written). Each method takes options (a new policy) or an
 * existing policy object (shared with other pipelines). `F` is what its fallbacks may give
 * instead of a function's value (`never` without one), which the built pipeline's calls resolve
 * with besides.
 *
 * @example
 * ```ts
 * const p = new PipelineBuilder()
 *   .retry({ maxAttempts: 3 })        // outermost: retries everything below
 *   .circuitBreaker(paymentsBreaker)  // shared breaker instance
 *   .timeout(1_000)                   // per attempt
 *   .bulkhead({ maxConcurrent: 10 })  // innermost
 *   .build();
 * ```
 */
export class PipelineBuilder<F = never> {
  private readonly list: Policy[] = [];

  /** Adds any policy object. */
  add<P extends Policy>(policy: P): PipelineBuilder<F | FallbackValueOf<P>> {
    return this.push(policy);
  }

  private push(policy: Policy): this {
    this.list.push(policy);
    return this;
  }

  retry<T>(options?: RetryOptions<T> | Retry<T>): this {
    return this.push(options instanceof Retry ? options : new Retry(options));
  }

  circuitBreaker<T>(options?: CircuitBreakerOptions<T> | CircuitBreaker<T>): this {
    return this.push(options instanceof CircuitBreaker ? options : new CircuitBreaker(options));
  }

  timeout(options: number | DurationString | TimeoutOptions | Timeout): this {
    return this.push(options instanceof Timeout ? options : new Timeout(options));
  }

  bulkhead(options?: number | BulkheadOptions | Bulkhead): this {
    return this.push(options instanceof Bulkhead ? options : new Bulkhead(options));
  }

  rateLimiter(options: RateLimiterOptions | RateLimiter): this {
    return this.push(options instanceof RateLimiter ? options : new RateLimiter(options));
  }

  fallback<T, R>(options: FallbackOptions<T, R> | Fallback<T, R>): PipelineBuilder<F | T> {
    return this.add(options instanceof Fallback ? options : new Fallback(options));
  }

  /** The pipeline of the policies added so far. */
  build(): Pipeline<unknown, F> {
    return new Pipeline(this.list);
  }
}
