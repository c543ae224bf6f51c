import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';
import type { ChaosCall } from './options.js';

/** The stable codes of this kind's errors (also in `ErrorCode`). */
export const chaosCodes = {
  ChaosFault: 'ERR_BREAKWATER_CHAOS_FAULT',
} as const;

/**
 * The fault a chaos step with strategy `fault` injects when given no `error` of its own. It
 * stands for a failure of the dependency (`reachedDependency` true), so breakers outside count
 * it and retries outside retry it, as they would a real failure. One error per step serves
 * every injection.
 */
export class ChaosFaultError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [chaosCodes.ChaosFault];

  constructor(policyName: string) {
    super(
      chaosCodes.ChaosFault,
      `Chaos step "${policyName}" injected a fault`,
      'chaos',
      policyName,
      true,
    );
  }
}

Object.defineProperty(ChaosFaultError.prototype, 'name', {
  value: 'ChaosFaultError',
  writable: true,
});

/** The errors chaos steps injected (held weakly: an error made per call goes with its call). */
const injected = new WeakSet<object>();

/** @internal Marks `error` as injected by a chaos step. */
export function markInjected(error: Error): Error {
  injected.add(error);
  return error;
}

/** @internal The error a fault step injects into `call`. */
export function faultFor(error: Error | ((call: ChaosCall) => Error), call: ChaosCall): Error {
  if (typeof error !== 'function') return error;
  const made = error(call);
  return made instanceof Error ? made : new Error(String(made));
}

/**
 * True when `error` is a fault a chaos step injected (its `ChaosFaultError`, or the error given
 * as its `error` option), false for a real failure: for logs and dashboards that must tell
 * the two apart.
 *
 * @example
 * ```ts
 * const result = await api.tryExecute(call);
 * if (!result.ok && !isInjectedFault(result.error)) alertOnRealFailure(result.error);
 * ```
 */
export function isInjectedFault(error: unknown): boolean {
  return typeof error === 'object' && error !== null && injected.has(error);
}
