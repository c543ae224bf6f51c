import type { RateLimitDecision } from '../../policies/rate-limiter/decision.js';
import { policyName, type RateLimitHeaderVersion, rateLimitHeaders } from '../headers/write.js';
import type { HeaderList } from './refusals.js';

/** @internal The rate limit header fields of decisions, in the versions a guard sends. */
export class RateLimitFields {
  private limit = Number.NaN;
  private windowMs = Number.NaN;
  private name = '';

  constructor(
    private readonly version: Exclude<RateLimitHeaderVersion, 'legacy'> | false,
    private readonly legacy: boolean,
  ) {}

  /** The policy's name, `${limit}-in-${window}` (the last one kept: a guard has one or few). */
  policy(d: RateLimitDecision): string {
    if (d.limit !== this.limit || d.windowMs !== this.windowMs) {
      this.name = policyName(d.limit, d.windowMs);
      this.limit = d.limit;
      this.windowMs = d.windowMs;
    }
    return this.name;
  }

  /**
   * The fields of `d`. `t` (reset) is the time until the whole burst is free on a request let
   * through, and the exact wait on a refused one, so that `Retry-After` is never below it.
   */
  of(d: RateLimitDecision): HeaderList {
    if (this.version === false && !this.legacy) return [];
    const quota = {
      policy: this.policy(d),
      limit: d.limit,
      windowMs: d.windowMs,
      remaining: d.remaining,
      resetMs: d.allowed ? d.resetMs : d.retryAfterMs,
    };
    const fields = this.version === false ? [] : rateLimitHeaders(this.version, quota);
    return this.legacy ? [...fields, ...rateLimitHeaders('legacy', quota)] : fields;
  }
}
