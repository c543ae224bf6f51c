import type { Clock } from '../../clock/Clock.js';
import { nameErrorClass, stackless } from '../../errors/BreakwaterError.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';

/** The stable codes of this kind's errors (also in `ErrorCode`). */
export const rateLimiterCodes = {
  RateLimited: 'ERR_BREAKWATER_RATE_LIMITED',
} as const;

/**
 * The rate limiter had no permit for the call (or not within its `maxWait`). `retryAfter`
 * says how long until the permits asked for would be free, read now.
 *
 * Unless the limiter has `debug: true`, one stackless error object serves the refusals that wait
 * for the same moment (those between two admissions of a key); an error, once handed out, never
 * changes.
 */
export class RateLimitedError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [rateLimiterCodes.RateLimited];
  /** @internal Clock reading at which the permits asked for are free. */
  readonly freeAt: number;
  readonly #clock: Clock;

  /** Built by the limiter; not meant to be constructed by users. */
  constructor(policyName: string, clock: Clock, freeAt: number) {
    super(
      rateLimiterCodes.RateLimited,
      `Rate limiter "${policyName}" has no permit free`,
      'rateLimiter',
      policyName,
    );
    this.#clock = clock;
    this.freeAt = freeAt;
  }

  /** Milliseconds until the permits asked for are free, read now. */
  get retryAfter(): number {
    return Math.max(0, this.freeAt - this.#clock.now());
  }
}

nameErrorClass(RateLimitedError, 'RateLimitedError');

/**
 * @internal The error for a refusal whose permits are free at `freeAt`: `last`, when it waits for
 * the same moment, else a new one. GCRA refuses without moving its state, so a run of refusals
 * between two admissions makes one error, and one a caller keeps never changes.
 */
export function refusalAt(
  last: RateLimitedError,
  policyName: string,
  clock: Clock,
  freeAt: number,
  debug: boolean,
): RateLimitedError {
  if (debug) return new RateLimitedError(policyName, clock, freeAt);
  if (last.freeAt === freeAt) return last;
  return stackless(() => new RateLimitedError(policyName, clock, freeAt));
}

/** True when `error` is a {@link RateLimitedError} from any copy of breakwater. */
export function isRateLimitedError(error: unknown): error is RateLimitedError {
  return error instanceof RateLimitedError;
}
