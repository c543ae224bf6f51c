import { Pipeline, type Policy } from '../pipeline/Pipeline.js';
import type { FallbackValueOf } from '../protocol/result.js';
import { Fallback } from './fallback/Fallback.js';
import type { FallbackOptions } from './fallback/options.js';
import {
  type LibraryKindTypes,
  type OptionsArgs,
  STEP_CLASSES,
  type StepKindName,
} from './kindTable.js';

/**
 * Builds a {@link Pipeline} step by step; each call adds a policy inside the ones before it
 * (outer-to-inner in the order written). Each kind's method (`retry`, `circuitBreaker`,
 * `timeout`, `bulkhead`, `rateLimiter`, `loadShedder`, `adaptiveLimit`, `hedge`, `chaos`, `fallback`)
 * takes options (a new policy, as its factory builds it) or an existing policy object (shared
 * with other pipelines). `F` is what its fallbacks may give instead of a function's value
 * (`never` without one), which the built pipeline's calls resolve with besides.
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
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the methods are installed on the prototype, typed by the interface of the same name.
export class PipelineBuilder<F = never> {
  private readonly list: Policy[] = [];

  /** Adds any policy object. */
  add<P extends Policy>(policy: P): PipelineBuilder<F | FallbackValueOf<P>> {
    this.list.push(policy);
    return this;
  }

  /** Adds a {@link Fallback}, from options or an instance; `T` joins what calls may give. */
  fallback<T, R>(options: FallbackOptions<T, R> | Fallback<T, R>): PipelineBuilder<F | T> {
    return this.add(options instanceof Fallback ? options : new Fallback(options));
  }

  /** The pipeline of the policies added so far. */
  build(): Pipeline<unknown, F> {
    return new Pipeline(this.list);
  }
}

// The step kinds' methods, one per entry of the kind table: typed by the interface below.
export interface PipelineBuilder<F = never> extends BuilderSteps<F> {}

type BuilderSteps<F> = {
  [K in StepKindName]: <T = unknown>(
    ...args: OptionsArgs<K, T, LibraryKindTypes<T>[K]['policy']>
  ) => PipelineBuilder<F>;
};

for (const [name, Step] of Object.entries(STEP_CLASSES) as [string, new (o: unknown) => Policy][]) {
  Object.defineProperty(PipelineBuilder.prototype, name, {
    configurable: true,
    writable: true,
    value(this: PipelineBuilder<unknown>, options?: unknown) {
      return this.add(options instanceof Step ? options : new Step(options));
    },
  });
}
