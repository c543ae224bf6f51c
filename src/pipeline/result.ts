import { isPolicyRejection } from '../errors/PolicyRejectedError.js';

/** A successful execution. */
export interface Success<T> {
  readonly ok: true;
  readonly value: T;
}

/** A failed execution: the function's error, or a policy's rejection (`rejected: true`). */
export interface Failure {
  readonly ok: false;
  readonly error: unknown;
  /** True when a policy refused the call (`error` is then a `PolicyRejectedError`). */
  readonly rejected: boolean;
}

/** What `tryExecute` resolves with: never a thrown rejection. */
export type ExecutionResult<T> = Success<T> | Failure;

/** @internal */
export function success<T>(value: T): Success<T> {
  return { ok: true, value };
}

/** @internal */
export function failure(error: unknown): Failure {
  return { ok: false, error, rejected: isPolicyRejection(error) };
}

/** @internal True for promises and other thenables. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
