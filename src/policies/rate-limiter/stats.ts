/** Counters of a rate limiter in a registry's snapshot. */
export interface RateLimiterStats {
  /** Calls admitted since the limiter was made (turns reserved by waiters included). */
  readonly admitted: number;
  /** Calls refused since the limiter was made. */
  readonly rejected: number;
  /** Callers waiting for their reserved turn now. */
  readonly waiting: number;
  /** Permits that could be taken now without waiting. */
  readonly available: number;
  /** Permits available at once from idle. */
  readonly burst: number;
}
