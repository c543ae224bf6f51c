import { OptionsError } from '../errors/OptionsError.js';
import { Pipeline } from '../pipeline/Pipeline.js';
import { Fallback } from '../policies/fallback/Fallback.js';
import type { FallbackOptions } from '../policies/fallback/options.js';
import { LIBRARY_KINDS, type StepKindName } from '../policies/kindTable.js';
import { otherCopyNote } from '../protocol/brand.js';
import { checkOptionsObject } from '../validation/validate.js';
import { makeDecorator } from './decorate.js';
import { policyDecorator, signalOption, type UnregisteredKind } from './kindDecorator.js';
import type { Spec } from './plan.js';
import type {
  FallbackDecorator,
  LibraryDecorator,
  PolicyDecorator,
  PolicyDecoratorOptions,
  SharedDecoratorOptions,
} from './types.js';

/** The decorator of the library kind named `name`, typed by the kind table. */
const decoratorOf = <K extends StepKindName>(name: K): LibraryDecorator<K> => {
  const { kind } = LIBRARY_KINDS[name];
  return ((arg?: unknown, options?: unknown) =>
    policyDecorator(kind, arg, options)) as LibraryDecorator<K>;
};

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
export const circuitBreaker: LibraryDecorator<'circuitBreaker'> = decoratorOf('circuitBreaker');

/**
 * Retries a method (which must return a promise). The argument is retry options (a new policy
 * per method, or per object with `{ perInstance: true }`), a registry name, or a `Retry`.
 */
export const retry: LibraryDecorator<'retry'> = decoratorOf('retry');

/**
 * A time limit on a method (which must return a promise). The argument is a number of ms, a
 * duration string or timeout options (a new policy), a registry name, or a `Timeout`. In place
 * of the `AbortSignal` argument a call passes, the method receives the execution's signal,
 * which also aborts at the deadline (with `{ signal: index }` it gets one there even if the
 * call passed none).
 */
export const timeout: LibraryDecorator<'timeout'> = decoratorOf('timeout');

/**
 * A bulkhead on a method. The argument is `maxConcurrent` or bulkhead options (a new policy),
 * a registry name (per key with `{ key }`), or a `Bulkhead`. A bulkhead with a queue makes
 * calls wait, so the method then returns a promise.
 */
export const bulkhead: LibraryDecorator<'bulkhead'> = decoratorOf('bulkhead');

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
export const rateLimit: LibraryDecorator<'rateLimiter'> = decoratorOf('rateLimiter');

/**
 * Client-side adaptive throttling on a method: load shedder options (a new policy), a registry
 * name, or a `LoadShedder`. A shed call fails with `LoadShedError`.
 */
export const loadShedder: LibraryDecorator<'loadShedder'> = decoratorOf('loadShedder');

/**
 * An adaptive concurrency limit on a method: adaptive limit options (a new policy), a registry
 * name, or an `AdaptiveLimit`. A refused call fails with `ConcurrencyLimitError`.
 */
export const adaptiveLimit: LibraryDecorator<'adaptiveLimit'> = decoratorOf('adaptiveLimit');

/**
 * Hedges a method (which must return a promise): more attempts start when the first is slow.
 * The argument is hedge options (a new policy), a registry name, or a `Hedge`.
 */
export const hedge: LibraryDecorator<'hedge'> = decoratorOf('hedge');

/**
 * A chaos step on a method: chaos options (a new step, off until `enabled`), a registry name,
 * or a `Chaos`. An injected fault fails the call as the options say.
 */
export const chaos: LibraryDecorator<'chaos'> = decoratorOf('chaos');

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
