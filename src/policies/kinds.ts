import type { AnyPolicyKind } from '../protocol/kind.js';
import type { BulkheadStats } from './bulkhead/Bulkhead.js';
import { bulkheadKind } from './bulkhead/kind.js';
import type { StateChangeEvent } from './circuit-breaker/events.js';
import { circuitBreakerKind } from './circuit-breaker/kind.js';
import type { CircuitState } from './circuit-breaker/state.js';
import type { CircuitBreakerStats } from './circuit-breaker/stats.js';
import { rateLimiterKind } from './rate-limiter/kind.js';
import type { RateLimiterStats } from './rate-limiter/stats.js';
import { retryKind } from './retry/kind.js';
import type { RetryStats } from './retry/Retry.js';
import { timeoutKind } from './timeout/kind.js';
import type { TimeoutStats } from './timeout/Timeout.js';

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

interface InstanceEntry {
  /** The instance's registry name. */
  readonly name: string;
  /** The key of a keyed instance (absent for named ones). */
  readonly key?: string;
}

/**
 * One instance of a registry, as plain JSON-serializable data. Instances of a kind given to
 * the registry with its `kinds` option appear too, with their kind's `name` and the state
 * and stats of its `view`: cast an entry whose `kind` is theirs.
 */
export type RegistryInstanceSnapshot =
  | (InstanceEntry & {
      readonly kind: 'circuitBreaker';
      readonly state: CircuitState;
      readonly stats: CircuitBreakerStats;
    })
  | (InstanceEntry & { readonly kind: 'bulkhead'; readonly stats: BulkheadStats })
  | (InstanceEntry & { readonly kind: 'rateLimiter'; readonly stats: RateLimiterStats })
  | (InstanceEntry & { readonly kind: 'retry'; readonly stats: RetryStats })
  | (InstanceEntry & { readonly kind: 'timeout'; readonly stats: TimeoutStats });

/**
 * A state change of one of a registry's instances, as plain data: a breaker's (the fields of
 * its `StateChangeEvent`), or of a kind with states given to the registry (its own event).
 */
export interface RegistryTransition extends StateChangeEvent {
  /** The registry name of the breaker. */
  readonly name: string;
  /** The key of a keyed breaker (absent for named ones). */
  readonly key?: string;
  /** When it happened, in ms since the Unix epoch (`Date.now()`). */
  readonly at: number;
}
