import type { KeyedRateLimiter } from './KeyedRateLimiter.js';

/** Emitted when a rate limiter refuses permits. */
export interface RateLimitedEvent {
  /** Permits asked for. */
  readonly permits: number;
  /** Milliseconds until they would be free. */
  readonly retryAfter: number;
  /** The key, for a {@link KeyedRateLimiter}. */
  readonly key?: string;
}
