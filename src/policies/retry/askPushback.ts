import { reportCallbackError } from '../../events/Listeners.js';
import type { AttemptFailure } from './options.js';
import type { Pushback } from './pushback.js';

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
