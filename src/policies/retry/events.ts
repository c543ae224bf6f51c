/** Emitted before each retry. */
export interface RetryEvent<T = unknown> {
  /** The attempt that just failed (1 for the first). */
  readonly attempt: number;
  /** The delay in ms before the next attempt. */
  readonly delay: number;
  /** The error of the failed attempt, if it threw. */
  readonly error?: unknown;
  /** The result of the failed attempt, if `handleResult` judged it a failure. */
  readonly result?: T;
}

/** Emitted when the retry stops with a failure (attempts or time used up, or not retryable). */
export interface GiveUpEvent<T = unknown> {
  readonly attempts: number;
  readonly error?: unknown;
  readonly result?: T;
  /**
   * Why: `max-attempts` or `max-duration` ran out; `pushback`: the server said not to retry, or
   * to wait longer than `maxDelay` (see `retryAfter`); `deadline`: the delay would end past the
   * call's deadline (the `timeout` given to `execute`, or a timeout policy outside the retry),
   * so it gave up at once rather than sleep into it; `budget-exhausted`: the retry budget
   * (option `budget`) refused the retry; `not-handled`: a failure `handle` does not
   * retry, or a refusal; `aborted`: the caller's signal or an outer deadline cut the call.
   */
  readonly reason:
    | 'max-attempts'
    | 'max-duration'
    | 'pushback'
    | 'deadline'
    | 'budget-exhausted'
    | 'not-handled'
    | 'aborted';
}
