import type { AnyPolicyKind, KindConfigTypes } from '../protocol/kind.js';
import type { BulkheadConfig } from './bulkhead/config.js';
import { bulkheadKind } from './bulkhead/kind.js';
import type { CircuitBreakerConfig } from './circuit-breaker/config.js';
import { circuitBreakerKind } from './circuit-breaker/kind.js';
import type { RateLimiterConfig } from './rate-limiter/config.js';
import { rateLimiterKind } from './rate-limiter/kind.js';
import type { RetryConfig } from './retry/config.js';
import { retryKind } from './retry/kind.js';
import type { TimeoutConfig } from './timeout/config.js';
import { timeoutKind } from './timeout/kind.js';

/**
 * The library's policy kinds, in the order snapshots, listings and metrics report them. The
 * registry, config data, decorators, metric collection, the Prometheus and OpenTelemetry
 * exporters and the dashboard read this list (and a registry's own `kinds`); nothing else
 * names a kind.
 */
export const POLICY_KINDS: readonly AnyPolicyKind[] = [
  circuitBreakerKind,
  retryKind,
  timeoutKind,
  bulkheadKind,
  rateLimiterKind,
];

/**
 * The types of the library's kinds' config data, by kind name (each kind's `name` and
 * `section`), from which `RegistryConfig` is built.
 *
 * @example
 * ```json
 * {
 *   "defaults": { "circuitBreaker": { "breakDuration": "30s" }, "timeout": { "timeout": "2s" } },
 *   "circuitBreakers": { "payments": { "failureRateThreshold": 0.25, "breakDuration": "1m" } },
 *   "retries": { "payments": { "maxAttempts": 4, "delay": "200ms" } },
 *   "rateLimiters": { "search": { "limit": 50, "period": "1s", "maxWait": "200ms" } },
 *   "keys": { "maxKeys": 50000, "idleTimeout": "15m" }
 * }
 * ```
 */
export interface PolicyKindConfigs {
  readonly circuitBreaker: KindConfigTypes<'circuitBreakers', CircuitBreakerConfig>;
  readonly retry: KindConfigTypes<'retries', RetryConfig>;
  /** Defaults may leave the duration to each entry. */
  readonly timeout: KindConfigTypes<'timeouts', TimeoutConfig, Partial<TimeoutConfig>>;
  readonly bulkhead: KindConfigTypes<'bulkheads', BulkheadConfig>;
  readonly rateLimiter: KindConfigTypes<'rateLimiters', RateLimiterConfig>;
}
