import { ErrorCode } from '../../errors/codes.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';

/** The call did not finish within the timeout. */
export class TimeoutError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [ErrorCode.Timeout];
  /** The timeout that passed, in ms. */
  readonly timeout: number;

  /** @internal */
  constructor(policyName: string, timeout: number) {
    super(
      ErrorCode.Timeout,
      `Timeout "${policyName}" passed after ${timeout} ms`,
      'timeout',
      policyName,
      true,
    );
    this.timeout = timeout;
  }
}

Object.defineProperty(TimeoutError.prototype, 'name', { value: 'TimeoutError', writable: true });

/** True when `error` is a {@link TimeoutError} from any copy of breakwater. */
export function isTimeoutError(error: unknown): error is TimeoutError {
  return error instanceof TimeoutError;
}
