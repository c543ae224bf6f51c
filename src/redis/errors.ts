import { BreakwaterError, nameErrorClass } from '../errors/BreakwaterError.js';
import { coreCodes } from '../errors/codes.js';

/** Stable codes of the errors a store rejects a decision with (also in `ErrorCode`). */
export const StoreErrorCode = {
  StoreTimeout: coreCodes.StoreTimeout,
  StoreUnavailable: coreCodes.StoreUnavailable,
} as const;

/** One of the {@link StoreErrorCode} values. */
export type StoreErrorCode = (typeof StoreErrorCode)[keyof typeof StoreErrorCode];

/**
 * Base class of "the store could not decide": the decision is unknown, neither allowed nor
 * refused. What to do then (let the call through, refuse it) is the caller's choice.
 */
export class StoreError extends BreakwaterError {
  static override readonly codes: readonly string[] = [
    StoreErrorCode.StoreTimeout,
    StoreErrorCode.StoreUnavailable,
  ];
  /** The name of the store (the rate limiter's name) that failed. */
  readonly storeName: string;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(code: StoreErrorCode, message: string, storeName: string, cause?: unknown) {
    super(code, message);
    this.storeName = storeName;
    if (cause !== undefined) {
      Object.defineProperty(this, 'cause', {
        value: cause,
        writable: true,
        configurable: true,
      });
    }
  }
}

nameErrorClass(StoreError, 'StoreError');

/**
 * No reply came within the store's `timeout`. The command may still run on the server later
 * (a paused or slow server executes it when it resumes), so a timed-out decision may have
 * used permits.
 */
export class StoreTimeoutError extends StoreError {
  static override readonly codes: readonly string[] = [StoreErrorCode.StoreTimeout];
  /** The timeout that passed, in ms. */
  readonly timeout: number;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(storeName: string, timeout: number) {
    super(
      StoreErrorCode.StoreTimeout,
      `Store "${storeName}" gave no decision within ${timeout} ms`,
      storeName,
    );
    this.timeout = timeout;
  }
}

nameErrorClass(StoreTimeoutError, 'StoreTimeoutError');

/**
 * The client or the server failed the command: not connected, connection lost, an error
 * reply, or a reply of an unexpected shape. The client's error is in `cause`.
 */
export class StoreUnavailableError extends StoreError {
  static override readonly codes: readonly string[] = [StoreErrorCode.StoreUnavailable];

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(storeName: string, cause: unknown) {
    super(
      StoreErrorCode.StoreUnavailable,
      `Store "${storeName}" could not decide: ${describeCause(cause)}`,
      storeName,
      cause,
    );
  }
}

nameErrorClass(StoreUnavailableError, 'StoreUnavailableError');

/** True when `error` is a {@link StoreError} (timeout or unavailable) from any copy of breakwater. */
export function isStoreError(error: unknown): error is StoreError {
  return error instanceof StoreError;
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) return cause.message || cause.name;
  return String(cause);
}
