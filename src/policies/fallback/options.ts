import { OptionsError } from '../../errors/OptionsError.js';
import { checkOptionsObject, fn, string } from '../../validation/validate.js';

/** What the pipeline failed with, handed to a fallback action. */
export type Failure<R = unknown> =
  | { readonly error: unknown; readonly result?: undefined }
  | { readonly error?: undefined; readonly result: R };

/**
 * Options of {@link Fallback}: exactly one of `value` and `action`. `T` is the type of the
 * value used instead, `R` the result type of the calls it covers, which `handleResult` judges
 * (inferred from an annotated `handleResult`; `unknown` when not given).
 */
export interface FallbackOptions<T = unknown, R = unknown> {
  /** The value used instead of the failure. */
  readonly value?: T;
  /** Computes the value used instead of the failure (may return a promise, or throw). */
  readonly action?: (failure: Failure<R>) => T | PromiseLike<T>;
  /** Which errors fall back. @default every error, policy rejections included */
  readonly handle?: (error: unknown) => boolean;
  /** Which successful results fall back too. @default none */
  readonly handleResult?: (result: R) => boolean;
  /** Name used in events. @default "fallback" */
  readonly name?: string;
}

/** @internal */
export interface ResolvedFallbackOptions {
  action: (failure: Failure) => unknown;
  handle: (error: unknown) => boolean;
  handleResult: ((result: unknown) => boolean) | undefined;
  name: string;
}

/** @internal */
export function resolveFallbackOptions<T, R>(
  options: FallbackOptions<T, R>,
): ResolvedFallbackOptions {
  const o = checkOptionsObject(options, ['value', 'action', 'handle', 'handleResult', 'name'], '');
  const hasValue = Object.hasOwn(o, 'value');
  if (hasValue === (o.action !== undefined)) {
    throw new OptionsError(
      'value',
      o.value,
      'set when `action` is not (give exactly one of `value` and `action`)',
    );
  }
  const action = fn<(failure: Failure) => unknown>(o.action, 'action', undefined);
  const value = o.value;
  return {
    action: action ?? (() => value),
    handle: fn(o.handle, 'handle', () => true),
    handleResult: fn(o.handleResult, 'handleResult', undefined),
    name: string(o.name, 'name', 'fallback'),
  };
}
