import { nameErrorClass } from './BreakwaterError.js';
import { timeoutCodes } from './codes.js';
import { PolicyRejectedError } from './PolicyRejectedError.js';

/**
 * The call did not finish within the timeout: a timeout policy's (its name in `policyName`),
 * or the one given to `execute(fn, { timeout })` (`policyName` is `"execute"`).
 */
export class TimeoutError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [timeoutCodes.Timeout];
  /** The timeout that passed, in ms. */
  readonly timeout: number;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(policyName: string, timeout: number, message?: string) {
    super(
      timeoutCodes.Timeout,
      message ?? `Timeout "${policyName}" passed after ${timeout} ms`,
      'timeout',
      policyName,
      true,
    );
    this.timeout = timeout;
  }
}

nameErrorClass(TimeoutError, 'TimeoutError');

/** True when `error` is a {@link TimeoutError} from any copy of breakwater. */
export function isTimeoutError(error: unknown): error is TimeoutError {
  return error instanceof TimeoutError;
}
