import type { BackoffKind, JitterKind } from '../../policies/retry/options.js';
import type { TimeoutStrategy } from '../../policies/timeout/options.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import type { Duration } from '../duration.js';

/**
 * A breaker's window in config data. `kind` picks the fields that apply (see
 * `WindowOptions`); in a named entry it may be left out to keep the kind of the default
 * window and change some of its fields.
 */
export interface WindowConfig {
  readonly kind?: 'consecutive' | 'count' | 'time';
  /** consecutive: failures in a row that open the breaker. */
  readonly threshold?: number;
  /** count: calls remembered. */
  readonly size?: number;
  /** count and time: calls needed before a rate is judged. */
  readonly minimumCalls?: number;
  /** time: the window's length. */
  readonly duration?: Duration;
  /** time: slices the window is kept in. */
  readonly buckets?: number;
}

/** A circuit breaker's options as config data (no functions, no clock, no initial state). */
export interface CircuitBreakerConfig {
  readonly window?: WindowConfig;
  readonly failureRateThreshold?: number;
  readonly slowCallDuration?: Duration;
  readonly slowCallRateThreshold?: number;
  readonly breakDuration?: Duration;
  readonly breakBackoff?: { readonly multiplier?: number; readonly maxDuration?: Duration };
  readonly halfOpen?: {
    readonly probes?: number;
    readonly maxConcurrent?: number;
    readonly successRatio?: number;
    readonly maxWait?: Duration;
  };
  readonly debug?: boolean;
  /** See {@link MetricsOptions}: `false`, `true`, or `{ latency: true | n }`. */
  readonly metrics?: boolean | MetricsOptions;
}

/** A retry policy's options as config data. `"Infinity"` is accepted where `Infinity` is. */
export interface RetryConfig {
  readonly maxAttempts?: number | 'Infinity';
  readonly maxDuration?: Duration;
  readonly backoff?: BackoffKind;
  readonly delay?: Duration;
  readonly maxDelay?: Duration;
  readonly multiplier?: number;
  readonly jitter?: JitterKind;
}

/** A timeout policy's options as config data. */
export interface TimeoutConfig {
  readonly timeout: Duration;
  readonly strategy?: TimeoutStrategy;
  readonly debug?: boolean;
}

/** A bulkhead's options as config data. `queueTimeout` accepts `"Infinity"`. */
export interface BulkheadConfig {
  readonly maxConcurrent?: number;
  readonly maxQueue?: number;
  readonly queueTimeout?: Duration;
  readonly debug?: boolean;
  /** See {@link MetricsOptions}: `false`, `true`, or `{ latency: true | n }`. */
  readonly metrics?: boolean | MetricsOptions;
}

/**
 * A rate limiter's options as config data: `limit` calls per `period` (with a `burst`), or a
 * token bucket (`capacity`, `refillRate`). A named entry that gives its rate in the other form
 * than `defaults.rateLimiter` replaces the default rate instead of mixing with it.
 */
export interface RateLimiterConfig {
  readonly limit?: number;
  readonly period?: Duration;
  readonly burst?: number;
  readonly capacity?: number;
  readonly refillRate?: number;
  readonly permits?: number;
  readonly maxWait?: Duration;
  readonly debug?: boolean;
}

/** Limits on the keyed instances of each name (see `Registry.keyedCircuitBreaker`). */
export interface KeysConfig {
  /** Keys kept per keyed name before the least recently used is evicted. @default 10000 */
  readonly maxKeys?: number;
  /** A key unused this long is dropped (`"Infinity"`: never). @default "10m" */
  readonly idleTimeout?: Duration;
}

/**
 * Registry settings as plain JSON-compatible data, the shape kept in a JSON or YAML file:
 * defaults per policy kind, and named instances whose options are the defaults with their own
 * fields on top (nested objects merge field by field; a `window` of another kind replaces the
 * default one).
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
export interface RegistryConfig {
  readonly defaults?: {
    readonly circuitBreaker?: CircuitBreakerConfig;
    readonly retry?: RetryConfig;
    readonly timeout?: Partial<TimeoutConfig>;
    readonly bulkhead?: BulkheadConfig;
    readonly rateLimiter?: RateLimiterConfig;
  };
  readonly circuitBreakers?: Readonly<Record<string, CircuitBreakerConfig>>;
  readonly retries?: Readonly<Record<string, RetryConfig>>;
  readonly timeouts?: Readonly<Record<string, TimeoutConfig>>;
  readonly bulkheads?: Readonly<Record<string, BulkheadConfig>>;
  readonly rateLimiters?: Readonly<Record<string, RateLimiterConfig>>;
  readonly keys?: KeysConfig;
}

/** Defaults of {@link KeysConfig}. */
export const keysDefaults = Object.freeze({ maxKeys: 10_000, idleTimeout: 600_000 });

/** @internal The policy kinds a registry holds. */
export type RegistryKind = 'circuitBreaker' | 'retry' | 'timeout' | 'bulkhead' | 'rateLimiter';

/** @internal One kind's options as plain data: the policy's own keys, durations in ms. */
export type OptionsData = Record<string, unknown>;

/** @internal Config data after validation. */
export interface ValidConfig {
  /** Per kind, the defaults. */
  readonly defaults: ReadonlyMap<RegistryKind, OptionsData>;
  /** Per kind, each named entry merged over the defaults. */
  readonly named: ReadonlyMap<RegistryKind, ReadonlyMap<string, OptionsData>>;
  readonly keys: { readonly maxKeys: number; readonly idleTimeout: number };
}
