import type { Clock } from '../../clock/Clock.js';
import { systemClock } from '../../clock/systemClock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { AdaptiveLimitOptions } from '../../policies/adaptive-limit/options.js';
import type {
  CircuitBreakerOptions,
  WindowOptions,
} from '../../policies/circuit-breaker/options.js';
import type { HedgeOptions } from '../../policies/hedge/options.js';
import type { RetryBudgetOptions } from '../../policies/retry-budget/options.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  checkOptionsObject,
  clockOption,
  duration,
  fn,
  integer,
  oneOf,
  positiveDuration,
} from '../../validation/validate.js';
import { CRITICALITY_HEADER, DEADLINE_HEADER } from '../context/headers.js';
import type { FetchInput } from './request.js';

/** A function of `fetch`'s shape: the global `fetch`, undici's, or any other. */
export type FetchFunction = (input: FetchInput, init?: RequestInit) => Promise<Response>;

/** How the protected fetch retries. */
export interface ProtectedRetryOptions {
  /** Retries after the first attempt, in [0, 10]. @default 2 */
  readonly maxRetries?: number;
  /** The first retry's delay before jitter, ms; it doubles each retry (full jitter). @default 300 */
  readonly delay?: number | DurationString;
  /**
   * The longest wait before a retry, backoff or server pushback, ms: a pushback above it (or
   * past the call's deadline) fails the call at once with a `PushbackTooLongError`. @default 10000
   */
  readonly maxDelay?: number | DurationString;
  /** Source of randomness in [0, 1) for the jitter, for tests. @default Math.random */
  readonly random?: () => number;
}

/** Options of {@link protectedFetch}. Every option has a default: `protectedFetch()` is the standard preset. */
export interface ProtectedFetchOptions {
  /** The function each attempt calls. @default globalThis.fetch, read at each call */
  readonly fetch?: FetchFunction;
  /** Retries, or `false` for none. @default { maxRetries: 2, delay: 300, maxDelay: 10000 } */
  readonly retry?: ProtectedRetryOptions | false;
  /**
   * The retry budget each origin's retries and hedges spend from (`retryBudget`'s options).
   * @default { ratio: 0.1, minRetriesPerSecond: 5 }
   */
  readonly budget?: RetryBudgetOptions;
  /**
   * Methods retried (and hedged) without further ado. Any other method (POST, PATCH) is
   * retried only with an `Idempotency-Key` header or `idempotent: true`.
   * @default GET HEAD OPTIONS PUT DELETE TRACE QUERY
   */
  readonly methods?: readonly string[];
  /** Treat every request as idempotent (retry POST and PATCH too). @default false */
  readonly idempotent?: boolean;
  /**
   * The responses that are failures (retried, counted by the breaker): a list of statuses or a
   * predicate. Network errors and attempt timeouts always are. @default 408 429 500 502 503 504
   */
  readonly failure?: readonly number[] | ((response: Response) => boolean);
  /** Each attempt's time to the response headers, ms. @default 10000 */
  readonly attemptTimeout?: number | DurationString;
  /** The whole call's deadline, retries and waits included, ms. @default 30000 */
  readonly timeout?: number | DurationString;
  /**
   * The circuit breaker kept per origin (`circuitBreaker`'s options), or `false` for none.
   * @default time window of 30 s, 20 calls at least, 50 % failures, or 10 in a row; 5 s break
   */
  readonly breaker?: CircuitBreakerOptions<Response> | false;
  /**
   * The adaptive concurrency limit kept per origin (`adaptiveLimit`'s options), or `false`.
   * 429 and 503 answers and timeouts are drops. Vegas, judged over windows of 250 ms or more,
   * grows back within a second once the origin has room again.
   * @default { algorithm: 'vegas', minWindow: 250 }, from 20 at once
   */
  readonly limit?: AdaptiveLimitOptions<Response> | false;
  /** Hedging of idempotent requests (`hedge`'s options); off unless given. @default off */
  readonly hedge?: HedgeOptions<Response>;
  /**
   * What the call gives when its last response is a failure: `'resolve'` with that response, as
   * `fetch` does, or `'reject'` with an `HttpStatusError` carrying it (for any response that is
   * not `ok`). @default "resolve"
   */
  readonly failedResponse?: 'resolve' | 'reject';
  /** The header every attempt sends the time left in (whole ms), or `false`. @default "x-timeout-ms" */
  readonly deadlineHeader?: string | false;
  /** The header that carries the call's criticality, or `false`. @default "x-criticality" */
  readonly criticalityHeader?: string | false;
  /** Origins kept at most; the least recently used goes first. @default 1000 */
  readonly maxOrigins?: number;
  /** An origin unused this long is dropped (its breaker and limit with it), ms. @default 600000 */
  readonly originIdleTimeout?: number | DurationString | 'Infinity';
  /** @default the system clock */
  readonly clock?: Clock;
}

/**
 * The standard preset: what `protectedFetch()` does with no options. Beside Microsoft's
 * `AddStandardResilienceHandler`, it retries only idempotent requests, spends a retry budget,
 * and keeps an adaptive concurrency limit per origin.
 */
export const standardPresetDefaults = Object.freeze({
  methods: Object.freeze(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'QUERY']),
  failureStatuses: Object.freeze([408, 429, 500, 502, 503, 504]),
  maxRetries: 2,
  delay: 300,
  maxDelay: 10_000,
  budget: Object.freeze({ ratio: 0.1, minRetriesPerSecond: 5 }),
  attemptTimeout: 10_000,
  timeout: 30_000,
  breaker: Object.freeze({
    window: Object.freeze({ kind: 'time', duration: 30_000, minimumCalls: 20 }),
    failureRateThreshold: 0.5,
    consecutiveFailures: 10,
    breakDuration: 5_000,
  }),
  limit: Object.freeze({ algorithm: 'vegas', minWindow: 250 }),
  limitDrops: Object.freeze([429, 503]),
  failedResponse: 'resolve' as const,
  deadlineHeader: DEADLINE_HEADER,
  criticalityHeader: CRITICALITY_HEADER,
  maxOrigins: 1_000,
  originIdleTimeout: 600_000,
});

/** @internal */
export interface ResolvedFetchOptions {
  fetch: FetchFunction | undefined;
  maxRetries: number;
  delay: number;
  maxDelay: number;
  random: (() => number) | undefined;
  budget: RetryBudgetOptions;
  methods: ReadonlySet<string>;
  idempotent: boolean;
  isFailure: (response: Response) => boolean;
  attemptTimeout: number;
  timeout: number;
  breaker: CircuitBreakerOptions<Response> | undefined;
  limit: AdaptiveLimitOptions<Response> | undefined;
  hedge: HedgeOptions<Response> | undefined;
  failedResponse: 'resolve' | 'reject';
  deadlineHeader: string | undefined;
  criticalityHeader: string | undefined;
  maxOrigins: number;
  originIdleTimeout: number;
  clock: Clock;
}

const KEYS = [
  'fetch',
  'retry',
  'budget',
  'methods',
  'idempotent',
  'failure',
  'attemptTimeout',
  'timeout',
  'breaker',
  'limit',
  'hedge',
  'failedResponse',
  'deadlineHeader',
  'criticalityHeader',
  'maxOrigins',
  'originIdleTimeout',
  'clock',
];
const RETRY_KEYS = ['maxRetries', 'delay', 'maxDelay', 'random'];
const d = standardPresetDefaults;

function statusPredicate(value: unknown): (response: Response) => boolean {
  if (value === undefined) value = d.failureStatuses;
  if (typeof value === 'function') return value as (response: Response) => boolean;
  const valid =
    Array.isArray(value) &&
    value.every((s) => Number.isInteger(s) && (s as number) >= 100 && (s as number) <= 599);
  if (!valid) {
    throw new OptionsError(
      'failure',
      value,
      'an array of HTTP statuses in [100, 599] or a function of the response',
    );
  }
  const statuses = new Set(value as number[]);
  return (response) => statuses.has(response.status);
}

function headerName(value: unknown, path: string, fallback: string): string | undefined {
  if (value === undefined) return fallback;
  if (value === false) return undefined;
  if (typeof value === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value)) {
    return value.toLowerCase();
  }
  throw new OptionsError(path, value, 'a header name (an HTTP token) or false');
}

function policyOptions<T>(value: unknown, path: string): T | undefined {
  if (value === false) return undefined;
  if (
    value === undefined ||
    (typeof value === 'object' && value !== null && !Array.isArray(value))
  ) {
    return (value ?? {}) as T;
  }
  throw new OptionsError(path, value, 'an options object or false');
}

function limitOptions(value: unknown): AdaptiveLimitOptions<Response> | undefined {
  const own = policyOptions<AdaptiveLimitOptions<Response>>(value, 'limit');
  return own === undefined ? undefined : ({ ...d.limit, ...own } as AdaptiveLimitOptions<Response>);
}

/** The budget's options: the preset's ratio and reserve apply to the default (window) model only. */
function budgetOptions(value: unknown): RetryBudgetOptions {
  const own = policyOptions<RetryBudgetOptions>(value, 'budget') ?? {};
  return own.model === undefined || own.model === 'window' ? { ...d.budget, ...own } : own;
}

/** The length of a breaker's time window, when it has one: Microsoft's sampling duration. */
function windowDuration(window: WindowOptions | undefined): number | undefined {
  if (window === undefined || window.kind !== 'time') return undefined;
  return duration(window.duration, 'breaker.window.duration', 30_000, 1);
}

/**
 * @internal Checks every option and the rules between them (Microsoft's: the attempt timeout
 * within the total, a breaker window at least twice the attempt timeout, retry delays within
 * the total); the policies' own options are checked when the first origin builds them.
 */
export function resolveFetchOptions(
  options: ProtectedFetchOptions | undefined,
): ResolvedFetchOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const r =
    o.retry === false ? { maxRetries: 0 } : checkOptionsObject(o.retry, RETRY_KEYS, 'retry');
  const timeout = duration(o.timeout, 'timeout', d.timeout, 1);
  const attemptTimeout = duration(
    o.attemptTimeout,
    'attemptTimeout',
    d.attemptTimeout,
    1,
    false,
    timeout,
  );
  const maxDelay = duration(r.maxDelay, 'retry.maxDelay', d.maxDelay, 0, false, timeout);
  const delay = duration(r.delay, 'retry.delay', d.delay, 0, false, maxDelay);
  const userBreaker = policyOptions<CircuitBreakerOptions<Response>>(o.breaker, 'breaker');
  const breaker = userBreaker === undefined ? undefined : { ...d.breaker, ...userBreaker };
  const sampling = windowDuration(breaker?.window as WindowOptions | undefined);
  if (sampling !== undefined && sampling < 2 * attemptTimeout) {
    throw new OptionsError(
      'breaker.window.duration',
      sampling,
      `a number of ms in [${2 * attemptTimeout}, 2147483647]: at least twice \`attemptTimeout\` (${attemptTimeout} ms), so that a window sees the attempts it judges end`,
    );
  }
  const methods = o.methods ?? d.methods;
  if (!Array.isArray(methods) || !methods.every((m) => typeof m === 'string' && m !== '')) {
    throw new OptionsError('methods', methods, 'an array of HTTP method names');
  }
  if (o.idempotent !== undefined && typeof o.idempotent !== 'boolean') {
    throw new OptionsError('idempotent', o.idempotent, 'a boolean');
  }
  const hedge =
    o.hedge === undefined ? undefined : policyOptions<HedgeOptions<Response>>(o.hedge, 'hedge');
  return {
    fetch: fn<FetchFunction>(o.fetch, 'fetch', undefined),
    maxRetries: integer(r.maxRetries, 'retry.maxRetries', d.maxRetries, 0, 10),
    delay,
    maxDelay,
    random: fn<() => number>(r.random, 'retry.random', undefined),
    budget: budgetOptions(o.budget),
    methods: new Set(methods.map((m: string) => m.toUpperCase())),
    idempotent: o.idempotent === true,
    isFailure: statusPredicate(o.failure),
    attemptTimeout,
    timeout,
    breaker,
    limit: limitOptions(o.limit),
    hedge,
    failedResponse: oneOf(o.failedResponse, 'failedResponse', d.failedResponse, [
      'resolve',
      'reject',
    ]),
    deadlineHeader: headerName(o.deadlineHeader, 'deadlineHeader', d.deadlineHeader),
    criticalityHeader: headerName(o.criticalityHeader, 'criticalityHeader', d.criticalityHeader),
    maxOrigins: integer(o.maxOrigins, 'maxOrigins', d.maxOrigins, 1, 1_000_000),
    originIdleTimeout: positiveDuration(
      o.originIdleTimeout,
      'originIdleTimeout',
      d.originIdleTimeout,
    ),
    clock: clockOption(o.clock, 'clock', systemClock),
  };
}
