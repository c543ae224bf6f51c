import { ask, type Disposer, Listeners } from '../../events/Listeners.js';
import type { Execution } from '../../pipeline/Execution.js';
import { adoptReplacement } from '../../pipeline/fallbackValue.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import type { FallbackStep } from '../../protocol/around.js';
import { brand } from '../../protocol/brand.js';
import type { FALLBACK_VALUE, RESULT_TYPE } from '../../protocol/result.js';
import { NEEDS_NOTHING, StepKind, type StepNeeds } from '../../protocol/step.js';
import { onlyArguments } from '../../validation/validate.js';
import type { FallbackEvent } from './events.js';
import {
  type FallbackOptions,
  type ResolvedFallbackOptions,
  resolveFallbackOptions,
} from './options.js';

/**
 * Replaces a failure of the inner part of a pipeline with a value, or with what a function of
 * the failure returns. Put it first (outermost) to cover every policy's rejections.
 *
 * @example
 * ```ts
 * const p = pipeline(fallback({ value: [] }), breaker, timeout(500));
 * const items = await p.execute(() => loadItems()); // [] when the breaker is open
 * ```
 */
export class Fallback<T = unknown, R = unknown> extends RunsAlone implements FallbackStep {
  /** Type only: the result type `handleResult` judges, read by `pipeline(...)`. */
  declare readonly [RESULT_TYPE]?: R;
  /** Type only: the value it produces, which `pipeline(...)` adds to its result type. */
  declare readonly [FALLBACK_VALUE]?: T;
  readonly stepKind = StepKind.Fallback;
  readonly name: string;
  /** @internal */ readonly o: ResolvedFallbackOptions;
  /** @internal */ readonly used = new Listeners<FallbackEvent>();
  private nFallbacks = 0;

  constructor(options: FallbackOptions<T, R>) {
    super();
    onlyArguments(arguments, 1, 'new Fallback()');
    this.o = resolveFallbackOptions(options);
    this.name = this.o.name;
  }

  /** Calls `listener` each time the fallback replaces a failure. */
  onFallback(listener: (event: FallbackEvent) => void): Disposer {
    return this.used.add(listener);
  }

  /** @internal What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return NEEDS_NOTHING;
  }

  /** Counters since the policy was built: `fallbacks`, the failures it replaced. */
  stats(): { readonly fallbacks: number } {
    return { fallbacks: this.nFallbacks };
  }

  /** Removes all listeners. */
  dispose(): void {
    this.used.clear();
  }

  /** @internal True when this failure (or result) falls back. */
  applies(isError: boolean, detail: unknown): boolean {
    // A predicate that throws leaves the failure as it is.
    if (isError) return ask(this.o.handle, detail, false);
    const h = this.o.handleResult;
    return h !== undefined && ask(h, detail, false);
  }

  /** @internal Produces the replacement (may throw or return a promise). */
  produce(isError: boolean, detail: unknown): unknown {
    this.nFallbacks++;
    const failure = isError ? { error: detail } : { result: detail };
    if (this.used.size !== 0) this.used.emit(failure);
    return this.o.action(failure);
  }

  /** @internal See `FallbackStep.adopt`. */
  adopt(exec: object, from: number, replacement: unknown): Promise<unknown> {
    return adoptReplacement(exec as Execution, from, replacement);
  }
}

brand(Fallback, 'Fallback');
