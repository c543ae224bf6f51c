import type { RateLimitDecision, ResolvedRateLimit } from './options.js';

// PENDING-MERGE: built with rateLimitHeaders() of ../headers/write.ts.
/** @internal The rate limit header fields of a decision, in the versions the guard sends. */
export function rateLimitFields(
  _rate: ResolvedRateLimit,
  _decision: RateLimitDecision,
): readonly (readonly [string, string])[] {
  return [];
}
