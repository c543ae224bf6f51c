import { reportCallbackError } from '../../events/Listeners.js';

/** What a failed attempt produced: an error, or a result that `handleResult` called a failure. */
export type AttemptFailure<T = unknown> =
  | { readonly error: unknown; readonly result?: undefined }
  | { readonly error?: undefined; readonly result: T };

/**
 * What a server asked of the caller: wait this many ms before the next attempt (a number),
 * do not retry at all (`false`), or nothing (undefined: the retry's own backoff applies).
 */
export type Pushback = number | false | undefined;

/**
 * @internal Asks a `retryAfter` option about a failed attempt (an error, or a result that
 * counts as a failure); a throw is reported and read as no pushback.
 */
export function askPushback(
  retryAfter: (failure: AttemptFailure) => Pushback,
  isError: boolean,
  detail: unknown,
): Pushback {
  try {
    return retryAfter(isError ? { error: detail } : { result: detail });
  } catch (error) {
    reportCallbackError(error);
    return undefined;
  }
}
