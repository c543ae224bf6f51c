import type { Criticality } from '../protocol/criticality.js';
import { duration } from '../validation/validate.js';
import type { ExecuteOptions } from './context.js';

/**
 * @internal What the scope a call is made in (an inbound request's handler) gives it: a
 * deadline on `performance.now()`'s scale (Infinity for none), a criticality and a signal.
 */
export interface Ambient {
  readonly deadline: number;
  readonly criticality: Criticality | undefined;
  readonly signal: AbortSignal | undefined;
}

/**
 * @internal Where pipelines find the scope of the call being made. Undefined until something
 * opens a scope (`breakwater/http`'s request context), so a program that never does pays one
 * read of this binding per call and nothing else.
 */
export let ambientSource: (() => Ambient | undefined) | undefined;

/** @internal Installs `source` (once; later calls with the same function do nothing). */
export function setAmbientSource(source: () => Ambient | undefined): void {
  ambientSource = source;
}

/**
 * @internal The options of a call made within a scope: the scope's criticality and signal where
 * the call gives none, both signals where it gives its own, and the earlier of the two
 * deadlines. Options that are invalid are returned as they are, for the call to refuse them.
 */
export function withAmbient(options: ExecuteOptions | undefined): ExecuteOptions | undefined {
  const scope = ambientSource?.();
  if (scope === undefined) return options;
  let timeout: ExecuteOptions['timeout'] = options?.timeout;
  if (scope.deadline !== Number.POSITIVE_INFINITY) {
    const left = Math.max(0, scope.deadline - performance.now());
    let own: number;
    try {
      own = duration(timeout, 'timeout', Number.POSITIVE_INFINITY, 0, true);
    } catch {
      return options;
    }
    timeout = Math.min(own, left);
  }
  const signal = options?.signal;
  return {
    timeout,
    criticality: options?.criticality ?? scope.criticality,
    signal:
      signal === undefined || scope.signal === undefined || signal === scope.signal
        ? (signal ?? scope.signal)
        : anySignal(signal, scope.signal),
  };
}

function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  // A signal that is not an AbortSignal is left for the call to refuse.
  if (!(a instanceof AbortSignal)) return a;
  return AbortSignal.any([a, b]);
}
