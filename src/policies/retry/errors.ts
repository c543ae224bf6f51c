import { nameErrorClass } from '../../errors/BreakwaterError.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';

/** The stable codes of this kind's errors (also in `ErrorCode`). */
export const retryCodes = {
  RetryExhausted: 'ERR_BREAKWATER_RETRY_EXHAUSTED',
} as const;

/** Why retrying stopped on a result: see `GiveUpEvent.reason`. */
export type ExhaustedReason =
  | 'max-attempts'
  | 'max-duration'
  | 'pushback'
  | 'deadline'
  | 'budget-exhausted'
  | 'aborted';

/**
 * Retrying stopped on a result that `handleResult` retries (an HTTP 503 on the last attempt),
 * with `lastResult: 'reject'`. It carries that result. The calls did reach the dependency, so
 * an outer breaker counts it as a failure and an outer retry may retry it.
 */
export class RetryExhaustedError<T = unknown> extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [retryCodes.RetryExhausted];
  /** The result of the last attempt. */
  readonly result: T;
  /** Attempts made, the first included. */
  readonly attempts: number;
  /**
   * Why retrying stopped: attempts or time ran out, the server's pushback, the retry budget
   * refused the retry, or the call was cut.
   */
  readonly reason: ExhaustedReason;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(policyName: string, result: T, attempts: number, reason: ExhaustedReason) {
    super(
      retryCodes.RetryExhausted,
      `Retry "${policyName}" gave up (${reason}) after ${attempts} attempt${attempts === 1 ? '' : 's'} on a result it retries`,
      'retry',
      policyName,
      true,
    );
    this.result = result;
    this.attempts = attempts;
    this.reason = reason;
  }
}

nameErrorClass(RetryExhaustedError, 'RetryExhaustedError');

/**
 * True when `error` is a {@link RetryExhaustedError} from any copy of breakwater. `T` names the
 * type of its `result` (the retry's result type, which the guard does not check).
 */
export function isRetryExhaustedError<T = unknown>(
  error: unknown,
): error is RetryExhaustedError<T> {
  return error instanceof RetryExhaustedError;
}
