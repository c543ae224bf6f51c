import { OptionsError } from '../errors/OptionsError.js';
import { brand, otherCopyNote } from '../protocol/brand.js';
import type { Criticality } from '../protocol/criticality.js';
import type { ExecuteOptions, ExecutionContext } from './context.js';
import { isPolicy } from './core.js';
import type { KeyedStep } from './KeyedStep.js';
import { isKeyedStep } from './keyedMark.js';
import { Pipeline, type Policy } from './Pipeline.js';
import { type ExecutionResult, failure } from './result.js';

/** Options of one call through a {@link KeyedPipeline}. */
export interface KeyedExecuteOptions extends ExecuteOptions {
  /**
   * The call's key (a downstream host, a tenant): each keyed step uses the instance of this
   * key, or of what its key function makes of it. Required unless every keyed step has a key
   * function.
   */
  readonly key?: string;
}

/** Pipelines a keyed pipeline of one keyed step keeps for reuse. */
const SOLE_CACHE = 1024;

/**
 * A pipeline holding keyed steps (`registry.keyed(...)`): each call finds the current instance
 * of its key for each of them through the registry, when it starts, then runs as a pipeline of
 * those instances and the other policies does. So a key the registry has evicted gets a new
 * instance on its next call, never the one dropped, and a new key gets one made on demand;
 * instances the registry protects from eviction (a breaker that is open, a bulkhead with calls
 * in flight) stay while they are in use.
 *
 * The pipeline of each set of instances is built on its first call and held weakly by them:
 * a call of a key in use costs a lookup of its instance and one `WeakMap` read more than a
 * call through a pipeline built once, and an evicted instance takes its pipeline with it.
 *
 * A call without a key, for a keyed step without a key function, fails with a `UsageError`
 * (code `ERR_BREAKWATER_USAGE`): `execute` rejects, `tryExecute` resolves with it as a
 * failure, `executeSync` throws.
 *
 * @example
 * ```ts
 * const api = pipeline(retry({ maxAttempts: 3 }), registry.keyed('circuitBreaker', 'api'));
 * await api.execute(() => fetch(`https://${host}/v1/items`), { key: host });
 * ```
 */
export class KeyedPipeline<R = unknown, F = never> {
  /** The policies and keyed steps, outermost first. */
  readonly policies: readonly (Policy | KeyedStep)[];
  /** The keyed steps, outermost first. */
  private readonly keyed: readonly KeyedStep[];
  /** The keyed step of a pipeline of one, which takes the shortest path. */
  private readonly sole: KeyedStep | undefined;
  /**
   * The pipelines built, by their instances: for one keyed step, instance to pipeline; for
   * more, nested maps by each instance in turn, the last one's holding the pipeline.
   */
  private readonly cache = new WeakMap<object, unknown>();
  /**
   * The pipelines of a sole keyed step, by instance, in the order they were built; at most
   * {@link SOLE_CACHE} (the oldest is dropped). A `WeakMap` would hold them as long as their
   * instances live, but with many keys its entries (ephemerons) cost each collection more than
   * building a pipeline again: a new key cost about 20 µs with one.
   */
  private readonly soleCache = new Map<object, Pipeline>();

  constructor(policies: readonly (Policy | KeyedStep)[]) {
    policies.forEach((p, i) => {
      if (!isKeyedStep(p) && !isPolicy(p)) {
        throw new OptionsError(
          `policies[${i}]`,
          p,
          `a breakwater policy or keyed step${otherCopyNote(p)}`,
        );
      }
    });
    this.policies = Object.freeze([...policies]);
    this.keyed = policies.filter((p): p is KeyedStep => isKeyedStep(p));
    this.sole = this.keyed.length === 1 ? this.keyed[0] : undefined;
  }

  /**
   * Runs `fn` through the policies, with the instances of the call's key. Resolves with its
   * value; rejects with its error, with a `PolicyRejectedError` when a policy refuses the
   * call, or with a `UsageError` when the call has no key to use.
   */
  execute<T extends R>(
    fn: (context: ExecutionContext) => T | PromiseLike<T>,
    options?: KeyedExecuteOptions,
  ): Promise<T | F> {
    let p: Pipeline<R, F>;
    try {
      p = this.pipelineFor(options?.key) as Pipeline<R, F>;
    } catch (error) {
      return Promise.reject(error);
    }
    return p.execute(fn, options);
  }

  /** Like {@link execute}, but never rejects: resolves with `{ ok, value }` or `{ ok, error }`. */
  tryExecute<T extends R>(
    fn: (context: ExecutionContext) => T | PromiseLike<T>,
    options?: KeyedExecuteOptions,
  ): Promise<ExecutionResult<T | F>> {
    let p: Pipeline<R, F>;
    try {
      p = this.pipelineFor(options?.key) as Pipeline<R, F>;
    } catch (error) {
      return Promise.resolve(failure(error));
    }
    return p.tryExecute(fn, options);
  }

  /**
   * Runs a synchronous `fn` through policies that never wait, with the instances of the call's
   * key (see `Pipeline.executeSync`), returning its value or throwing.
   */
  executeSync<T extends R>(
    fn: (context: ExecutionContext) => T,
    options?: { readonly key?: string; readonly criticality?: Criticality },
  ): T | F {
    return (this.pipelineFor(options?.key) as Pipeline<R, F>).executeSync(fn, options);
  }

  /**
   * Disposes the policies given to the pipeline. The instances of keyed steps belong to their
   * registry, which disposes them (`registry.dispose()`, or when it drops a key).
   */
  dispose(): void {
    for (const p of this.policies) if (!isKeyedStep(p)) p.dispose();
  }

  /** The pipeline of the instances of the call's `key`, built on the first call that uses them. */
  private pipelineFor(key: string | undefined): Pipeline {
    const sole = this.sole;
    if (sole === undefined) return this.pipelineForMany(key);
    const instance = sole.resolve(key);
    const cached = this.soleCache.get(instance);
    if (cached !== undefined) return cached;
    const built = this.build([instance]);
    const cache = this.soleCache;
    if (cache.size >= SOLE_CACHE) cache.delete(cache.keys().next().value!);
    cache.set(instance, built);
    return built;
  }

  private pipelineForMany(key: string | undefined): Pipeline {
    const keyed = this.keyed;
    const instances = keyed.map((step) => step.resolve(key));
    let node = this.cache;
    const last = instances.length - 1;
    for (let i = 0; i < last; i++) {
      const next = node.get(instances[i]!) as WeakMap<object, unknown> | undefined;
      if (next === undefined) return this.build(instances);
      node = next;
    }
    return (node.get(instances[last]!) as Pipeline | undefined) ?? this.build(instances);
  }

  /** Builds and keeps the pipeline of `instances`, one per keyed step in order. */
  private build(instances: readonly object[]): Pipeline {
    let k = 0;
    const pipeline = new Pipeline(
      this.policies.map((p) => (isKeyedStep(p) ? (instances[k++] as Policy) : p)),
    );
    if (this.sole !== undefined) return pipeline;
    let node = this.cache;
    const last = instances.length - 1;
    for (let i = 0; i < last; i++) {
      let next = node.get(instances[i]!) as WeakMap<object, unknown> | undefined;
      if (next === undefined) node.set(instances[i]!, (next = new WeakMap()));
      node = next;
    }
    node.set(instances[last]!, pipeline);
    return pipeline;
  }
}

brand(KeyedPipeline, 'KeyedPipeline');
