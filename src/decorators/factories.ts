import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { Pipeline, type Policy } from '../pipeline/Pipeline.js';
import { Bulkhead } from '../policies/bulkhead/Bulkhead.js';
import type { BulkheadOptions } from '../policies/bulkhead/options.js';
import { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import type { CircuitBreakerOptions } from '../policies/circuit-breaker/options.js';
import { Fallback } from '../policies/fallback/Fallback.js';
import type { FallbackOptions } from '../policies/fallback/options.js';
import type { RateLimiterOptions } from '../policies/rate-limiter/options.js';
import { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import type { RetryOptions } from '../policies/retry/options.js';
import { Retry } from '../policies/retry/Retry.js';
import { otherCopyNote } from '../policies/shared/brand.js';
import type { TimeoutOptions } from '../policies/timeout/options.js';
import { Timeout } from '../policies/timeout/Timeout.js';
import { Registry } from '../registry/Registry.js';
import { checkOptionsObject } from '../validation/validate.js';
import { makeDecorator, type SpecSource } from './decorate.js';
import type { NamedKind, Spec } from './plan.js';
import type {
  KeyedDecoratorOptions,
  NamedDecoratorOptions,
  PolicyDecorator,
  PolicyDecoratorOptions,
  SharedDecoratorOptions,
  SignalArgument,
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
export function circuitBreaker(
  breaker: CircuitBreaker,
  options?: SharedDecoratorOptions,
): PolicyDecorator;
export function circuitBreaker(
  options?: CircuitBreakerOptions,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator;
export function circuitBreaker(arg?: unknown, options?: unknown): PolicyDecorator {
  return policyDecorator('circuitBreaker', arg, options, {
    named: 'circuitBreaker',
    keyed: true,
    is: (p) => p instanceof CircuitBreaker,
    create: (o) => new CircuitBreaker(o as CircuitBreakerOptions),
  });
}

/**
 * Retries a method (which must return a promise). The argument is retry options (a new policy
 * per method, or per object with `{ perInstance: true }`), a registry name, or a `Retry`.
 */
export function retry(
  name: string,
  options?: NamedDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function retry(
  policy: Retry,
  options?: SharedDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function retry(
  options?: RetryOptions,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator<PromiseLike<unknown>>;
export function retry(arg?: unknown, options?: unknown): PolicyDecorator<PromiseLike<unknown>> {
  return policyDecorator('retry', arg, options, {
    named: 'retry',
    keyed: false,
    is: (p) => p instanceof Retry,
    create: (o) => new Retry(o as RetryOptions),
  });
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
  return policyDecorator('timeout', arg, options, {
    named: 'timeout',
    keyed: false,
    is: (p) => p instanceof Timeout,
    create: (o) => new Timeout(o as number | TimeoutOptions),
  });
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
  return policyDecorator('bulkhead', arg, options, {
    named: 'bulkhead',
    keyed: true,
    is: (p) => p instanceof Bulkhead,
    create: (o) => new Bulkhead(o as number | BulkheadOptions),
  });
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
  return policyDecorator('rateLimit', arg, options, {
    named: 'rateLimiter',
    keyed: true,
    is: (p) => p instanceof RateLimiter,
    create: (o) => new RateLimiter(o as RateLimiterOptions),
  });
}

/** A fallback on a method: fallback options (a new policy) or a `Fallback`. */
export function fallback<T>(policy: Fallback<T>, options?: SharedDecoratorOptions): PolicyDecorator;
export function fallback<T>(
  options: FallbackOptions<T>,
  decoratorOptions?: PolicyDecoratorOptions,
): PolicyDecorator;
export function fallback(arg: unknown, options?: unknown): PolicyDecorator {
  return policyDecorator('fallback', arg, options, {
    named: undefined,
    keyed: false,
    is: (p) => p instanceof Fallback,
    create: (o) => new Fallback(o as FallbackOptions),
  });
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

interface KindInfo {
  /** The registry kind a name stands for (none for fallbacks). */
  readonly named: NamedKind | undefined;
  /** The registry keeps this kind per key. */
  readonly keyed: boolean;
  readonly is: (value: unknown) => boolean;
  readonly create: (options: unknown) => Policy;
}

function policyDecorator<R>(
  label: string,
  arg: unknown,
  options: unknown,
  info: KindInfo,
): PolicyDecorator<R> {
  let source: SpecSource;
  const shared = (typeof arg === 'string' && info.named !== undefined) || info.is(arg);
  if (shared && typeof options === 'object' && options !== null && 'perInstance' in options) {
    throw new UsageError(
      `@${label}(...): \`perInstance\` applies to policy options only; a ${typeof arg === 'string' ? 'registry name' : 'policy object'} stands for one shared instance`,
    );
  }
  if (typeof arg === 'string' && info.named !== undefined) {
    source = namedSource(label, arg, options, info.named, info.keyed);
  } else if (info.is(arg)) {
    const o = checkOptionsObject(options, ['signal'], '');
    const spec: Spec = { form: 'fixed', policies: [arg as Policy] };
    source = { label, spec: () => spec, signal: signalOption(o.signal) };
  } else {
    const o = checkOptionsObject(options, ['perInstance', 'signal'], '');
    const perInstance = booleanOption(o.perInstance, 'perInstance');
    // Built now so bad options fail where the decorator is written, not at the first call.
    let spare: Policy | undefined = info.create(arg);
    const create = () => info.create(arg);
    const spec = perInstance
      ? (): Spec => ({ form: 'per-instance', create })
      : (): Spec => {
          // Each decorated method gets its own policy, even from one decorator value.
          const policy = spare ?? create();
          spare = undefined;
          return { form: 'fixed', policies: [policy] };
        };
    source = { label, spec, signal: signalOption(o.signal) };
  }
  return makeDecorator(source) as PolicyDecorator<R>;
}

function namedSource(
  label: string,
  name: string,
  options: unknown,
  kind: NamedKind,
  keyed: boolean,
): SpecSource {
  if (name.length === 0) throw new OptionsError('name', name, 'a registry name (non-empty)');
  const o = checkOptionsObject(
    options,
    keyed ? ['registry', 'key', 'signal'] : ['registry', 'signal'],
    '',
  );
  const registry = o.registry;
  if (registry !== undefined && !(registry instanceof Registry)) {
    throw new OptionsError('registry', registry, `a Registry${otherCopyNote(registry)}`);
  }
  const key = o.key;
  if (key !== undefined && typeof key !== 'function') {
    throw new OptionsError('key', key, 'a function of the arguments returning a string');
  }
  const spec: Spec = {
    form: 'named',
    kind,
    name,
    registry,
    key: key as ((...args: unknown[]) => unknown) | undefined,
  };
  return { label, spec: () => spec, signal: signalOption(o.signal) };
}

function booleanOption(value: unknown, path: string): boolean {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  throw new OptionsError(path, value, 'a boolean');
}

function signalOption(value: unknown): SignalArgument | undefined {
  if (value === undefined || value === 'last' || value === false) return value;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  throw new OptionsError('signal', value, "'last', false or an argument index (an integer >= 0)");
}
