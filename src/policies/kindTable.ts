import { coreCodes, type ErrorCode, timeoutCodes } from '../errors/codes.js';
import type { DurationString, KindConfigTypes, PolicyKindOf } from '../protocol/kind.js';
import type { AdaptiveLimitStats } from './adaptive-limit/AdaptiveLimit.js';
import { AdaptiveLimit } from './adaptive-limit/AdaptiveLimit.js';
import type { AdaptiveLimitConfig } from './adaptive-limit/config.js';
import { adaptiveLimitCodes } from './adaptive-limit/errors.js';
import { adaptiveLimitKind } from './adaptive-limit/kind.js';
import type { AdaptiveLimitOptions } from './adaptive-limit/options.js';
import type { BulkheadStats } from './bulkhead/Bulkhead.js';
import { Bulkhead } from './bulkhead/Bulkhead.js';
import type { BulkheadConfig } from './bulkhead/config.js';
import { bulkheadCodes } from './bulkhead/errors.js';
import { bulkheadKind } from './bulkhead/kind.js';
import type { BulkheadOptions } from './bulkhead/options.js';
import type { ChaosStats } from './chaos/Chaos.js';
import { Chaos } from './chaos/Chaos.js';
import type { ChaosConfig } from './chaos/config.js';
import { chaosCodes } from './chaos/errors.js';
import { chaosKind } from './chaos/kind.js';
import type { ChaosOptions } from './chaos/options.js';
import { CircuitBreaker } from './circuit-breaker/CircuitBreaker.js';
import type { CircuitBreakerConfig } from './circuit-breaker/config.js';
import { circuitBreakerCodes } from './circuit-breaker/errors.js';
import { circuitBreakerKind } from './circuit-breaker/kind.js';
import type { CircuitBreakerOptions } from './circuit-breaker/options.js';
import type { CircuitState } from './circuit-breaker/state.js';
import type { CircuitBreakerStats } from './circuit-breaker/stats.js';
import type { CoalesceStats } from './coalesce/Coalescer.js';
import { Coalescer } from './coalesce/Coalescer.js';
import type { CoalesceConfig } from './coalesce/config.js';
import { coalesceKind } from './coalesce/kind.js';
import type { CoalesceOptions } from './coalesce/options.js';
import type { HedgeConfig } from './hedge/config.js';
import type { HedgeStats } from './hedge/Hedge.js';
import { Hedge } from './hedge/Hedge.js';
import { hedgeKind } from './hedge/kind.js';
import type { HedgeOptions } from './hedge/options.js';
import type { LoadShedderConfig } from './load-shedder/config.js';
import { loadShedderCodes } from './load-shedder/errors.js';
import { loadShedderKind } from './load-shedder/kind.js';
import type { LoadShedderStats } from './load-shedder/LoadShedder.js';
import { LoadShedder } from './load-shedder/LoadShedder.js';
import type { LoadShedderOptions } from './load-shedder/options.js';
import type { RateLimiterConfig } from './rate-limiter/config.js';
import { rateLimiterCodes } from './rate-limiter/errors.js';
import { rateLimiterKind } from './rate-limiter/kind.js';
import type { RateLimiterOptions } from './rate-limiter/options.js';
import { RateLimiter } from './rate-limiter/RateLimiter.js';
import type { RateLimiterStats } from './rate-limiter/stats.js';
import type { RetryConfig } from './retry/config.js';
import { retryCodes } from './retry/errors.js';
import { retryKind } from './retry/kind.js';
import type { RetryOptions } from './retry/options.js';
import type { RetryStats } from './retry/Retry.js';
import { Retry } from './retry/Retry.js';
import type { RetryBudgetConfig } from './retry-budget/config.js';
import { retryBudgetKind } from './retry-budget/kind.js';
import type { RetryBudgetOptions } from './retry-budget/options.js';
import type { RetryBudget, RetryBudgetStats } from './retry-budget/RetryBudget.js';
import type { TimeoutConfig } from './timeout/config.js';
import { timeoutKind } from './timeout/kind.js';
import type { TimeoutOptions } from './timeout/options.js';
import type { TimeoutStats } from './timeout/Timeout.js';
import { Timeout } from './timeout/Timeout.js';

/**
 * What the typed surfaces of one library kind take and give: its instances (`policy`), the
 * options a new one is built from (`undefined` among them when they may be left out), whether
 * a registry keeps it per key, whether it is a pipeline step (a retry budget is not), and
 * whether calls through it always settle later (a method under its decorator returns a promise).
 */
export interface KindTypes {
  readonly policy: object;
  readonly options: unknown;
  readonly keyed: boolean;
  readonly step: boolean;
  readonly settlesLater: boolean;
}

/**
 * The library's policy kinds by name, with the types of their typed surfaces: the registry's
 * named (and keyed) accessors, the pipeline builder's methods and the typed decorators are
 * mapped from it, so a kind added here has all of them. `T` is the result type of the calls
 * an instance guards, for the kinds typed by it (given, or inferred from an annotated
 * `handleResult`, as the factories infer it).
 */
export interface LibraryKindTypes<T = unknown> {
  readonly circuitBreaker: {
    policy: CircuitBreaker<T>;
    options: CircuitBreakerOptions<T> | undefined;
    keyed: true;
    step: true;
    settlesLater: false;
  };
  readonly retry: {
    policy: Retry<T>;
    options: RetryOptions<T> | undefined;
    keyed: false;
    step: true;
    settlesLater: true;
  };
  readonly retryBudget: {
    policy: RetryBudget;
    options: RetryBudgetOptions | undefined;
    keyed: false;
    step: false;
    settlesLater: false;
  };
  readonly timeout: {
    policy: Timeout;
    options: number | DurationString | TimeoutOptions;
    keyed: false;
    step: true;
    settlesLater: true;
  };
  readonly bulkhead: {
    policy: Bulkhead;
    options: number | BulkheadOptions | undefined;
    keyed: true;
    step: true;
    settlesLater: false;
  };
  readonly rateLimiter: {
    policy: RateLimiter;
    options: RateLimiterOptions;
    keyed: true;
    step: true;
    settlesLater: false;
  };
  readonly loadShedder: {
    policy: LoadShedder<T>;
    options: LoadShedderOptions<T> | undefined;
    keyed: false;
    step: true;
    settlesLater: false;
  };
  readonly adaptiveLimit: {
    policy: AdaptiveLimit<T>;
    options: AdaptiveLimitOptions<T> | undefined;
    keyed: false;
    step: true;
    settlesLater: false;
  };
  readonly hedge: {
    policy: Hedge<T>;
    options: HedgeOptions<T> | undefined;
    keyed: false;
    step: true;
    settlesLater: true;
  };
  readonly coalesce: {
    policy: Coalescer<T>;
    options: CoalesceOptions<T> | undefined;
    keyed: false;
    step: true;
    settlesLater: true;
  };
  readonly chaos: {
    policy: Chaos<T>;
    options: ChaosOptions<T> | undefined;
    keyed: false;
    step: true;
    settlesLater: false;
  };
}

/**
 * The types of each library kind's config data (its `name` and `section`, the type of an entry
 * and of its defaults) and of its entries in a registry's snapshot, from which
 * `PolicyKindConfigs` and `RegistryInstanceSnapshot` are mapped.
 */
export interface LibraryKindData {
  readonly circuitBreaker: {
    config: KindConfigTypes<'circuitBreakers', CircuitBreakerConfig>;
    snapshot: { readonly state: CircuitState; readonly stats: CircuitBreakerStats };
  };
  readonly retry: {
    config: KindConfigTypes<'retries', RetryConfig>;
    snapshot: { readonly stats: RetryStats };
  };
  readonly retryBudget: {
    config: KindConfigTypes<'retryBudgets', RetryBudgetConfig>;
    snapshot: { readonly stats: RetryBudgetStats };
  };
  readonly timeout: {
    /** Defaults may leave the duration to each entry. */
    config: KindConfigTypes<'timeouts', TimeoutConfig, Partial<TimeoutConfig>>;
    snapshot: { readonly stats: TimeoutStats };
  };
  readonly bulkhead: {
    config: KindConfigTypes<'bulkheads', BulkheadConfig>;
    snapshot: { readonly stats: BulkheadStats };
  };
  readonly rateLimiter: {
    config: KindConfigTypes<'rateLimiters', RateLimiterConfig>;
    snapshot: { readonly stats: RateLimiterStats };
  };
  readonly loadShedder: {
    config: KindConfigTypes<'loadShedders', LoadShedderConfig>;
    snapshot: { readonly stats: LoadShedderStats };
  };
  readonly adaptiveLimit: {
    config: KindConfigTypes<'adaptiveLimits', AdaptiveLimitConfig>;
    snapshot: { readonly stats: AdaptiveLimitStats };
  };
  readonly hedge: {
    config: KindConfigTypes<'hedges', HedgeConfig>;
    snapshot: { readonly stats: HedgeStats };
  };
  readonly coalesce: {
    config: KindConfigTypes<'coalescers', CoalesceConfig>;
    snapshot: { readonly stats: CoalesceStats };
  };
  readonly chaos: {
    config: KindConfigTypes<'chaosSteps', ChaosConfig>;
    snapshot: { readonly state: 'injecting' | 'off'; readonly stats: ChaosStats };
  };
}

/** The channels of the library's kinds, by key (each kind's descriptor names its own). */
export interface DiagnosticsChannels {
  /**
   * A circuit breaker changed state: `{ name, from, to, reason, generation, failureRate,
   * slowCallRate, callsInWindow, breakDuration }`.
   */
  readonly stateChange: string;
  /**
   * A breaker, bulkhead, rate limiter, load shedder or adaptive limit refused a call:
   * `{ kind, name, reason, error }`.
   */
  readonly rejected: string;
  /** A retry policy is about to wait and try again: `{ name, attempt, delay, error }`. */
  readonly retry: string;
  /** A timeout policy's deadline passed: `{ name, timeout }`. */
  readonly timeout: string;
  /**
   * An adaptive limit changed its limit: `{ name, from, to, reason, latency, baseline,
   * answered, dropped, maxInFlight }` (see `LimitChangeEvent`).
   */
  readonly limitChange: string;
  /** A hedge policy started a hedge: `{ name, hedge, reason }`. */
  readonly hedge: string;
  /** A chaos step injected into a call: `{ name, strategy }`. */
  readonly chaos: string;
}

/** The span events of the library's kinds, by key. */
export interface SpanEventNames {
  /** A circuit breaker changed state. */
  readonly stateChange: string;
  /** A circuit breaker, bulkhead, rate limiter, load shedder or adaptive limit refused a call. */
  readonly rejected: string;
  /** A retry policy is about to wait and try again. */
  readonly retry: string;
}

/** The name of a library kind. */
export type LibraryKindName = keyof LibraryKindTypes;

/** The name of a library kind that is a pipeline step. */
export type StepKindName = {
  [K in LibraryKindName]: LibraryKindTypes[K]['step'] extends true ? K : never;
}[LibraryKindName];

/** The name of a library kind a registry keeps per key. */
export type KeyedKindName = {
  [K in LibraryKindName]: LibraryKindTypes[K]['keyed'] extends true ? K : never;
}[LibraryKindName];

/**
 * The parameters that build an instance of kind `K` for results `T`: its options (left out
 * when they may be) or else an `Or` (an instance, where one is taken too), then `Rest`.
 */
export type OptionsArgs<
  K extends LibraryKindName,
  T = unknown,
  Or = never,
  Rest extends unknown[] = [],
> = undefined extends LibraryKindTypes<T>[K]['options']
  ? [options?: LibraryKindTypes<T>[K]['options'] | Or, ...Rest]
  : [options: LibraryKindTypes<T>[K]['options'] | Or, ...Rest];

/**
 * The runtime side of {@link LibraryKindTypes}, in the order snapshots, listings and metrics
 * report the kinds: each library kind's descriptor, and whether it is a pipeline step (checked
 * against the table by the compiler). The kind list (`POLICY_KINDS`), and from it the channel,
 * span-event and metric lists, are read from it.
 */
export const LIBRARY_KINDS: {
  readonly [K in LibraryKindName]: {
    readonly kind: PolicyKindOf<LibraryKindTypes[K]['policy']>;
    readonly step: LibraryKindTypes[K]['step'];
  };
} = {
  circuitBreaker: { kind: circuitBreakerKind, step: true },
  retry: { kind: retryKind, step: true },
  retryBudget: { kind: retryBudgetKind, step: false },
  timeout: { kind: timeoutKind, step: true },
  bulkhead: { kind: bulkheadKind, step: true },
  rateLimiter: { kind: rateLimiterKind, step: true },
  loadShedder: { kind: loadShedderKind, step: true },
  adaptiveLimit: { kind: adaptiveLimitKind, step: true },
  hedge: { kind: hedgeKind, step: true },
  coalesce: { kind: coalesceKind, step: true },
  chaos: { kind: chaosKind, step: true },
};

/**
 * The class of each library kind that is a step, for the pipeline builder: the classes alone,
 * not the descriptors (config schemas, metrics, views), so that a bundle with the builder
 * carries no more than its policies. The compiler holds it to the kind table.
 */
export const STEP_CLASSES: {
  readonly [K in StepKindName]: new (
    options: LibraryKindTypes[K]['options'],
  ) => LibraryKindTypes[K]['policy'];
} = {
  circuitBreaker: CircuitBreaker,
  retry: Retry,
  timeout: Timeout,
  bulkhead: Bulkhead,
  rateLimiter: RateLimiter,
  loadShedder: LoadShedder,
  adaptiveLimit: AdaptiveLimit,
  hedge: Hedge,
  coalesce: Coalescer,
  chaos: Chaos,
};

/**
 * The codes of each library kind's errors (a kind without errors of its own, none), then the
 * codes no one kind owns: the public `ErrorCode` gathers them in this order.
 */
export const KIND_CODES = {
  circuitBreaker: circuitBreakerCodes,
  bulkhead: bulkheadCodes,
  rateLimiter: rateLimiterCodes,
  loadShedder: loadShedderCodes,
  adaptiveLimit: adaptiveLimitCodes,
  timeout: timeoutCodes,
  retry: retryCodes,
  chaos: chaosCodes,
  core: coreCodes,
} as const satisfies { readonly [K in LibraryKindName | 'core']?: Record<string, ErrorCode> };
