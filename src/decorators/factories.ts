import { OptionsError } from '../errors/OptionsError.js';
import { Pipeline } from '../pipeline/Pipeline.js';
import type { Bulkhead } from '../policies/bulkhead/Bulkhead.js';
import { bulkheadKind } from '../policies/bulkhead/kind.js';
import type { BulkheadOptions } from '../policies/bulkhead/options.js';
import type { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import { circuitBreakerKind } from '../policies/circuit-breaker/kind.js';
import type { CircuitBreakerOptions } from '../policies/circuit-breaker/options.js';
import { Fallback } from '../policies/fallback/Fallback.js';
import type { FallbackOptions } from '../policies/fallback/options.js';
import { rateLimiterKind } from '../policies/rate-limiter/kind.js';
import type { RateLimiterOptions } from '../policies/rate-limiter/options.js';
import type { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import { retryKind } from '../policies/retry/kind.js';
import type { RetryOptions } from '../policies/retry/options.js';
import type { Retry } from '../policies/retry/Retry.js';
import { timeoutKind } from '../policies/timeout/kind.js';
import type { TimeoutOptions } from '../policies/timeout/options.js';
import type { Timeout } from '../policies/timeout/Timeout.js';
import { otherCopyNote } from '../protocol/brand.js';
import { checkOptionsObject } from '../validation/validate.js';
import { makeDecorator } from './decorate.js';
import { policyDecorator, signalOption, type UnregisteredKind } from './kindDecorator.js';
import type { Spec } from './plan.js';
import type {
  FallbackDecorator,
  KeyedDecoratorOptions,
  NamedDecoratorOptions,
  PolicyDecorator,
  PolicyDecoratorOptions,
  SharedDecoratorOptions,
} from './types.js';

/**
 * A circuit breaker on a method. The argument is one of:
 * - options: a new breaker for this method, shared by every object of the class (one per
 *   object with `{ perInstance: true }`);
 * - a registry name: `registry.circuitBreaker(name)` (the default registry unless
 *   `{ registry }`), or one breaker per key with `{ key: (...args) => string }`;
 * - a `CircuitBreaker` object.
 *
 * @example
 * ```ts
 * class Inventory {
 *   @circuitBreaker({ window: { kind: 'consecutive', threshold: 5 } })
 *   count(sku: string): number { ... }      // stays synchronous
 *
 *   @circuitBreaker('inventory-api', { key: (host: string) => host })
 *   async fetchFrom(host: string, signal?: AbortSignal) { ... }
 * }
 * ```
 */
export function circuitBreaker<A extends unknown[] = never[]>(
  name: string,
  options?: KeyedDecoratorOptions<A>,
): PolicyDecorator<unknown, A>;
export function circuitBreaker<T>(
  breaker: CircuitBreaker<T>,
  options?: SharedDecoratorOptions,
): PolicyDecorator;
export function circuitBreaker<T = unknown>(
  options?: CircuitBreakerOptions<T>,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator;
export function circuitBreaker(arg?: unknown, options?: unknown): PolicyDecorator {
  return policyDecorator(circuitBreakerKind, arg, options);
}

/**
 * Retries a method (which must return a promise). The argument is retry options (a new policy
 * per method, or per object with `{ perInstance: true }`), a registry name, or a `Retry`.
 */
export function retry(
  name: string,
  options?: NamedDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function retry<T>(
  policy: Retry<T>,
  options?: SharedDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function retry<T = unknown>(
  options?: RetryOptions<T>,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function retry(arg?: unknown, options?: unknown): PolicyDecorator<PromiseLike<unknown>> {
  return policyDecorator(retryKind, arg, options);
}

/**
 * A time limit on a method (which must return a promise). The argument is a number of ms or
 * timeout options (a new policy), a registry name, or a `Timeout`. In place of the
 * `AbortSignal` argument a call passes, the method receives the execution's signal, which also
 * aborts at the deadline (with `{ signal: index }` it gets one there even if the call passed none).
 */
export function timeout(
  name: string,
  options?: NamedDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function timeout(
  policy: Timeout,
  options?: SharedDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function timeout(
  options: number | TimeoutOptions,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function timeout(arg: unknown, options?: unknown): PolicyDecorator<PromiseLike<unknown>> {
  return policyDecorator(timeoutKind, arg, options);
}

/**
 * A bulkhead on a method. The argument is `maxConcurrent` or bulkhead options (a new policy),
 * a registry name (per key with `{ key }`), or a `Bulkhead`. A bulkhead with a queue makes
 * calls wait, so the method then returns a promise.
 */
export function bulkhead<A extends unknown[] = never[]>(
  name: string,
  options?: KeyedDecoratorOptions<A>,
): PolicyDecorator<unknown, A>;
export function bulkhead(policy: Bulkhead, options?: SharedDecoratorOptions): PolicyDecorator;
export function bulkhead(
  options?: number | BulkheadOptions,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator;
export function bulkhead(arg?: unknown, options?: unknown): PolicyDecorator {
  return policyDecorator(bulkheadKind, arg, options);
}

/**
 * A rate limit on a method. The argument is rate limiter options (a new limiter for this
 * method, shared by every object of the class unless `{ perInstance: true }`), a registry
 * name (per key with `{ key }`: one limit per user, per API key), or a `RateLimiter`. A
 * refused call fails with `RateLimitedError`; with `maxWait` calls may wait for their turn, so
 * the method then returns a promise.
 *
 * @example
 * ```ts
 * class Api {
 *   @rateLimit({ limit: 10, period: 1_000 })
 *   async search(q: string) { ... }
 *
 *   @rateLimit('per-user', { key: (user: string) => user })
 *   async profile(user: string) { ... }
 * }
 * ```
 */
export function rateLimit<A extends unknown[] = never[]>(
  name: string,
  options?: KeyedDecoratorOptions<A>,
): PolicyDecorator<unknown, A>;
export function rateLimit(limiter: RateLimiter, options?: SharedDecoratorOptions): PolicyDecorator;
export function rateLimit(
  options: RateLimiterOptions,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator;
export function rateLimit(arg: unknown, options?: unknown): PolicyDecorator {
  return policyDecorator(rateLimiterKind, arg, options);
}

/** Fallbacks are kept by no registry, so `@fallback` takes no registry name. */
const fallbackKind: UnregisteredKind = {
  unregistered: true,
  name: 'fallback',
  is: (value) => value instanceof Fallback,
  create: (options) => new Fallback(options as FallbackOptions),
};

/**
 * A fallback on a method: fallback options (a new policy) or a `Fallback`. The method's result
 * type must admit the fallback's value (declare `Promise<User | null>` under `{ value: null }`).
 */
export function fallback<T, R>(
  policy: Fallback<T, R>,
  options?: SharedDecoratorOptions,
): FallbackDecorator<T>;
export function fallback<T, R = unknown>(
  options: FallbackOptions<T, R>,
  decoratorOptions?: PolicyDecoratorOptions,
): FallbackDecorator<T>;
export function fallback(arg: unknown, options?: unknown): FallbackDecorator<unknown> {
  return policyDecorator(fallbackKind, arg, options) as FallbackDecorator<unknown>;
}

/**
 * Runs a method through an existing pipeline. Stacked with other decorators, its policies take
 * its place in the method's one pipeline.
 *
 * @example
 * ```ts
 * const guarded = pipeline(retry({ maxAttempts: 3 }), breaker);
 * class Api { @usePipeline(guarded) async get(path: string) { ... } }
 * ```
 */
export function usePipeline(pipeline: Pipeline, options?: SharedDecoratorOptions): PolicyDecorator {
  if (!(pipeline instanceof Pipeline)) {
    throw new OptionsError(
      'pipeline',
      pipeline,
      `a Pipeline (from \`pipeline(...)\` or a builder)${otherCopyNote(pipeline)}`,
    );
  }
  const o = checkOptionsObject(options, ['signal'], '');
  const spec: Spec = { form: 'fixed', policies: pipeline.policies, pipeline };
  return makeDecorator({
    label: 'usePipeline',
    spec: () => spec,
    signal: signalOption(o.signal),
  }) as PolicyDecorator;
}
