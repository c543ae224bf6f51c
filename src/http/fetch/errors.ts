import { BreakwaterError, nameErrorClass } from '../../errors/BreakwaterError.js';
import type { ErrorCode } from '../../errors/codes.js';

/** Codes of the protected fetch's own errors, stable for logs and code. */
export const FetchErrorCode = Object.freeze({
  HttpStatus: 'ERR_BREAKWATER_HTTP_STATUS',
  PushbackTooLong: 'ERR_BREAKWATER_PUSHBACK_TOO_LONG',
});

/**
 * The protected fetch's last response was not `ok` (with `failedResponse: 'reject'`). It
 * carries the response, whose body is left for the caller to read or cancel.
 */
export class HttpStatusError extends BreakwaterError {
  static override readonly codes: readonly string[] = [FetchErrorCode.HttpStatus];
  /** The last response's status. */
  readonly status: number;
  /** The last response's headers. */
  readonly headers: Headers;
  /** The last response, its body unread. */
  readonly response: Response;
  /** Attempts made, the first included. */
  readonly attempts: number;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(response: Response, url: string, attempts: number) {
    super(
      FetchErrorCode.HttpStatus as ErrorCode,
      `${response.status} ${response.statusText || 'response'} from ${url} after ${attempts} attempt${attempts === 1 ? '' : 's'}`,
    );
    this.status = response.status;
    this.headers = response.headers;
    this.response = response;
    this.attempts = attempts;
  }
}

nameErrorClass(HttpStatusError, 'HttpStatusError');

/**
 * The server asked for a wait (`Retry-After`, `RateLimit`, ...) longer than the call may wait:
 * past its deadline, or above `retry.maxDelay`. The call fails at once rather than sleep into
 * a timeout. It carries the wait, the time that was left, and the response.
 */
export class PushbackTooLongError extends BreakwaterError {
  static override readonly codes: readonly string[] = [FetchErrorCode.PushbackTooLong];
  /** The wait the server asked for, ms. */
  readonly wait: number;
  /** What the call could wait: the smaller of its time left and `retry.maxDelay`, ms. */
  readonly allowed: number;
  /** The status of the response that asked for the wait. */
  readonly status: number;
  /** That response, its body unread. */
  readonly response: Response;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(response: Response, url: string, wait: number, allowed: number) {
    super(
      FetchErrorCode.PushbackTooLong as ErrorCode,
      `${url} answered ${response.status} asking for a wait of ${Math.ceil(wait)} ms, more than the ${Math.floor(allowed)} ms the call may wait`,
    );
    this.wait = wait;
    this.allowed = allowed;
    this.status = response.status;
    this.response = response;
  }
}

nameErrorClass(PushbackTooLongError, 'PushbackTooLongError');

/**
 * Marks an error a protected client's request itself failed with (a network error), from any
 * copy of the package: the server middleware answers it 502.
 */
const DOWNSTREAM: unique symbol = Symbol.for('breakwater.downstreamFailure') as never;

/** @internal Marks `error` as the downstream's failure (a frozen error stays unmarked). */
export function markDownstreamFailure(error: unknown): void {
  if (typeof error !== 'object' || error === null || Object.isFrozen(error)) return;
  try {
    Object.defineProperty(error, DOWNSTREAM, { value: true });
  } catch {
    // An object that refuses new properties (a proxy, a sealed error) stays unmarked.
  }
}

/** @internal True for an error marked by {@link markDownstreamFailure}. */
export function isDownstreamFailure(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [DOWNSTREAM]?: unknown })[DOWNSTREAM] === true
  );
}
