import { OptionsError } from '../errors/OptionsError.js';

/**
 * @internal The error of a call whose `fn` is not a function, refused before any policy admits
 * it: a breaker must not count the caller's mistake as a failure of the dependency.
 */
export function notAFunction(fn: unknown): OptionsError {
  return new OptionsError('fn', fn, 'a function (the call to run)');
}

/**
 * @internal The error of a call given a `signal` that is not an AbortSignal, or undefined for
 * one that is. A duck check rather than `instanceof`, so signals of another realm or of a
 * polyfill are taken.
 */
export function signalError(signal: unknown): OptionsError | undefined {
  const s = signal as Partial<AbortSignal> | null;
  if (
    typeof s === 'object' &&
    s !== null &&
    typeof s.aborted === 'boolean' &&
    typeof s.addEventListener === 'function' &&
    typeof s.removeEventListener === 'function'
  ) {
    return undefined;
  }
  return new OptionsError('signal', signal, 'an AbortSignal');
}
