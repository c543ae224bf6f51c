import type { ExecuteOptions } from '../../pipeline/context.js';
import { duration } from '../../validation/validate.js';
import type { RequestContext } from './requestContext.js';

/**
 * The options of a call made within `context`: the context's criticality and signal where the
 * call gives none, both signals where it gives its own, and the earlier of the two deadlines.
 * Options that are invalid are returned as they are, for the call to refuse them.
 */
export function callOptions(
  options: ExecuteOptions | undefined,
  context: RequestContext,
): ExecuteOptions | undefined {
  let timeout: ExecuteOptions['timeout'] = options?.timeout;
  if (context.deadline !== Number.POSITIVE_INFINITY) {
    let own: number;
    try {
      own = duration(timeout, 'timeout', Number.POSITIVE_INFINITY, 0, true);
    } catch {
      return options;
    }
    timeout = Math.min(own, Math.max(0, context.deadline - performance.now()));
  }
  const signal = options?.signal;
  const scoped = context.signal;
  return {
    timeout,
    criticality: options?.criticality ?? context.criticality,
    signal:
      signal === undefined || scoped === undefined || signal === scoped
        ? (signal ?? scoped)
        : // A signal that is not an AbortSignal is left for the call to refuse.
          signal instanceof AbortSignal
          ? AbortSignal.any([signal, scoped])
          : signal,
  };
}
