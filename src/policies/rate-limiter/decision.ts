/**
 * A rate limiter's answer with the state it leaves, for the `RateLimit` and `Retry-After`
 * headers of a response: what `decide` returns (`RateLimiter.decide`,
 * `KeyedRateLimiter.decide`, `RedisRateLimiter.decide`). All times are in ms.
 */
export interface RateLimitDecision {
  /** Whether the permits were granted (and taken). */
  readonly allowed: boolean;
  /** The burst: permits a full window holds. */
  readonly limit: number;
  /** burst × interval, ms: the time the whole burst takes to refill. */
  readonly windowMs: number;
  /** Whole permits that could still be taken right after this decision (>= 0). */
  readonly remaining: number;
  /** 0 when allowed; else ms until the same request would be allowed (the exact GCRA wait). */
  readonly retryAfterMs: number;
  /** ms until the whole burst is free again (>= 0). */
  readonly resetMs: number;
  /**
   * True when the decision was not the shared store's: Redis did not answer and the limiter's
   * `onStoreFailure` mode decided. Always false for the in-memory limiters.
   */
  readonly degraded: boolean;
}

/**
 * @internal The decision of a GCRA of one permit per `intervalUs` with bursts of `burst`,
 * whose TAT is `aheadUs` ahead of now after the decision (0 or less when idle);
 * `retryAfterMs` is 0 (or less) when the permits were granted, else the ms until they would be.
 */
export function gcraDecision(
  retryAfterMs: number,
  aheadUs: number,
  intervalUs: number,
  burst: number,
  degraded: boolean,
): RateLimitDecision {
  const ahead = Math.max(0, aheadUs);
  const free = Math.floor((burst * intervalUs - ahead) / intervalUs);
  return {
    allowed: retryAfterMs <= 0,
    limit: burst,
    windowMs: (burst * intervalUs) / 1_000,
    remaining: Math.max(0, Math.min(free, burst)),
    retryAfterMs: Math.max(0, retryAfterMs),
    resetMs: ahead / 1_000,
    degraded,
  };
}
