import type { Criticality } from '../protocol/criticality.js';
import type { ExecuteOptions, ExecutionContext } from './context.js';
import { Pipeline, type Policy } from './Pipeline.js';
import type { ExecutionResult } from './result.js';

/** The one-policy pipeline of each policy that ran a call by itself, made on its first call. */
const alone = new WeakMap<object, Pipeline>();

function aloneOf(policy: object): Pipeline {
  let p = alone.get(policy);
  if (p === undefined) alone.set(policy, (p = new Pipeline([policy as Policy])));
  return p;
}

/**
 * What every policy can do by itself: run a call as the pipeline of that policy alone does
 * (`breaker.execute(fn)` is `pipeline(breaker).execute(fn)`). The pipeline is made on the
 * first call and held weakly by the policy. Combining policies, or the fastest path for a hot
 * call, is a pipeline built once.
 */
export abstract class RunsAlone {
  /**
   * Runs `fn` through this policy alone. Resolves with its value; rejects with its error or
   * with a `PolicyRejectedError` when the policy refuses the call.
   *
   * @example
   * ```ts
   * const user = await breaker.execute(({ signal }) => fetch(url, { signal }));
   * ```
   */
  execute<T>(
    fn: (context: ExecutionContext) => T | PromiseLike<T>,
    options?: ExecuteOptions,
  ): Promise<T> {
    return aloneOf(this).execute(fn, options);
  }

  /** Like {@link execute}, but never rejects: resolves with `{ ok, value }` or `{ ok, error }`. */
  tryExecute<T>(
    fn: (context: ExecutionContext) => T | PromiseLike<T>,
    options?: ExecuteOptions,
  ): Promise<ExecutionResult<T>> {
    return aloneOf(this).tryExecute(fn, options);
  }

  /**
   * Runs a synchronous `fn` through this policy alone, returning its value or throwing; for
   * policies that never wait (see `Pipeline.executeSync`).
   */
  executeSync<T>(
    fn: (context: ExecutionContext) => T,
    options?: { readonly criticality?: Criticality },
  ): T {
    return aloneOf(this).executeSync(fn, options);
  }
}
