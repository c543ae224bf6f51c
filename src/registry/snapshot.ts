import type { Bulkhead, BulkheadStats } from '../policies/bulkhead/Bulkhead.js';
import type { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import { CircuitState } from '../policies/circuit-breaker/state.js';
import type { CircuitBreakerStats } from '../policies/circuit-breaker/stats.js';
import type { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import type { Retry, RetryStats } from '../policies/retry/Retry.js';
import type { Timeout, TimeoutStats } from '../policies/timeout/Timeout.js';
import type { RegistryInstances } from './Registry.js';

export type { BulkheadStats, RetryStats, TimeoutStats };

/** Counters of a rate limiter in a {@link RegistrySnapshot}. */
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

interface Entry {
  /** The instance's registry name. */
  readonly name: string;
  /** The key of a keyed instance (absent for named ones). */
  readonly key?: string;
}

/** One instance of a registry, as plain JSON-serializable data. */
export type RegistryInstanceSnapshot =
  | (Entry & {
      readonly kind: 'circuitBreaker';
      readonly state: CircuitState;
      readonly stats: CircuitBreakerStats;
    })
  | (Entry & { readonly kind: 'bulkhead'; readonly stats: BulkheadStats })
  | (Entry & { readonly kind: 'rateLimiter'; readonly stats: RateLimiterStats })
  | (Entry & { readonly kind: 'retry'; readonly stats: RetryStats })
  | (Entry & { readonly kind: 'timeout'; readonly stats: TimeoutStats });

/**
 * Every instance of a registry (named ones first, then keyed ones, most recently used first)
 * with its state and counters, as plain data for health endpoints and dashboards.
 */
export interface RegistrySnapshot {
  readonly instances: readonly RegistryInstanceSnapshot[];
}

/** @internal */
export function breakerEntry(
  name: string,
  key: string | undefined,
  breaker: CircuitBreaker,
): RegistryInstanceSnapshot {
  const stats = breaker.stats();
  return withKey({ kind: 'circuitBreaker', name, state: stats.state, stats }, key);
}

/** @internal A breaker shelved as the numbers written by `CircuitBreaker.exportIdle`. */
export function shelvedBreakerEntry(
  name: string,
  key: string,
  store: Float64Array,
  at: number,
): RegistryInstanceSnapshot {
  return {
    kind: 'circuitBreaker',
    name,
    key,
    state: CircuitState.Closed,
    stats: shelvedBreakerStats(store, at),
  };
}

/** @internal The stats of a breaker shelved as numbers (a closed one). */
export function shelvedBreakerStats(store: Float64Array, at: number): CircuitBreakerStats {
  return {
    state: CircuitState.Closed,
    generation: store[at + 1]!,
    successes: store[at + 2]!,
    failures: store[at + 3]!,
    rejections: store[at + 4]!,
    ignored: store[at + 5]!,
    callsInWindow: store[at]!,
    failuresInWindow: 0,
    slowCallsInWindow: 0,
    probesInFlight: 0,
    // Shelving keeps only rejections of an open breaker (see `BreakerKind.shelve`).
    rejectionsByReason: { open: store[at + 4]!, halfOpen: 0, forcedOpen: 0 },
    transitions: 0,
    transitionsTo: NO_TRANSITIONS,
  };
}

/** @internal `bulkhead` undefined: a shelved (idle) one with `maxConcurrent`. */
export function bulkheadEntry(
  name: string,
  key: string | undefined,
  bulkhead: Bulkhead | undefined,
  maxConcurrent: number,
): RegistryInstanceSnapshot {
  const stats: BulkheadStats =
    bulkhead === undefined
      ? {
          inFlight: 0,
          queueLength: 0,
          maxConcurrent,
          admitted: 0,
          rejectionsByReason: { full: 0, queueTimeout: 0 },
        }
      : bulkhead.stats();
  return withKey({ kind: 'bulkhead', name, stats }, key);
}

/**
 * @internal `limiter` undefined: a shelved one, which is idle (its whole `burst` free) and
 * kept no counters.
 */
export function rateLimiterEntry(
  name: string,
  key: string | undefined,
  limiter: RateLimiter | undefined,
  burst: number,
): RegistryInstanceSnapshot {
  const stats: RateLimiterStats =
    limiter === undefined
      ? { admitted: 0, rejected: 0, waiting: 0, available: burst, burst }
      : { ...limiter.stats(), burst: limiter.burst };
  return withKey({ kind: 'rateLimiter', name, stats }, key);
}

/** @internal */
export function retryEntry(name: string, retry: Retry): RegistryInstanceSnapshot {
  return { kind: 'retry', name, stats: retry.stats() };
}

/** @internal */
export function timeoutEntry(name: string, timeout: Timeout): RegistryInstanceSnapshot {
  return { kind: 'timeout', name, stats: timeout.stats() };
}

const NO_TRANSITIONS: Readonly<Record<CircuitState, number>> = Object.freeze({
  closed: 0,
  open: 0,
  'half-open': 0,
  disabled: 0,
  'forced-open': 0,
  'metrics-only': 0,
});

function withKey<E extends RegistryInstanceSnapshot>(entry: E, key: string | undefined): E {
  return key === undefined ? entry : { ...entry, key };
}

/**
 * @internal Pushes onto `instances` the entries of the named instances of `all` that follow
 * the breakers, in snapshot order: retries, timeouts, bulkheads, rate limiters.
 */
export function pushNamedAfterBreakers(
  all: RegistryInstances,
  instances: RegistryInstanceSnapshot[],
): void {
  for (const [name, { policy }] of all.retries) instances.push(retryEntry(name, policy));
  for (const [name, { policy }] of all.timeouts) instances.push(timeoutEntry(name, policy));
  for (const [name, { policy }] of all.bulkheads) {
    instances.push(bulkheadEntry(name, undefined, policy, policy.maxConcurrent));
  }
  for (const [name, { policy }] of all.rateLimiters) {
    instances.push(rateLimiterEntry(name, undefined, policy, policy.burst));
  }
}

/**
 * @internal The snapshot of every instance of a registry (see `Registry.snapshot`). Keys past
 * their idle timeout are dropped first.
 */
export function registrySnapshot(all: RegistryInstances): RegistrySnapshot {
  const instances: RegistryInstanceSnapshot[] = [];
  for (const [name, { policy }] of all.breakers)
    instances.push(breakerEntry(name, undefined, policy));
  pushNamedAfterBreakers(all, instances);
  for (const [name, { instances: keyed }] of all.keyedBreakers) {
    keyed.sweepAll();
    keyed.forEach((key, breaker, store, at) => {
      instances.push(
        breaker === undefined
          ? shelvedBreakerEntry(name, key, store, at)
          : breakerEntry(name, key, breaker),
      );
    });
  }
  for (const [name, { kind, instances: keyed }] of all.keyedBulkheads) {
    keyed.sweepAll();
    keyed.forEach((key, bulkhead) => {
      instances.push(bulkheadEntry(name, key, bulkhead, kind.o.maxConcurrent));
    });
  }
  for (const [name, { kind, instances: keyed }] of all.keyedRateLimiters) {
    keyed.sweepAll();
    keyed.forEach((key, limiter) => {
      instances.push(rateLimiterEntry(name, key, limiter, kind.o.burst));
    });
  }
  return { instances };
}
