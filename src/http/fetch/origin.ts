import { TimeoutError } from '../../errors/TimeoutError.js';
import { Pipeline } from '../../pipeline/Pipeline.js';
import type {
  AdaptiveLimit,
  AdaptiveLimitStats,
} from '../../policies/adaptive-limit/AdaptiveLimit.js';
import type { CircuitBreaker } from '../../policies/circuit-breaker/CircuitBreaker.js';
import type { CircuitBreakerStats } from '../../policies/circuit-breaker/stats.js';
import {
  adaptiveLimit,
  circuitBreaker,
  hedge,
  retry,
  retryBudget,
  timeout,
} from '../../policies/factories.js';
import type { Hedge } from '../../policies/hedge/Hedge.js';
import type { Retry, RetryStats } from '../../policies/retry/Retry.js';
import type { RetryBudget, RetryBudgetStats } from '../../policies/retry-budget/RetryBudget.js';
import type { AttemptFailure, Pushback } from '../../policies/shared/pushback.js';
import type { Timeout } from '../../policies/timeout/Timeout.js';
import type { KeyedKind } from '../../protocol/kind.js';
import { type ResolvedFetchOptions, standardPresetDefaults } from './options.js';

const LIMIT_DROPS: readonly number[] = standardPresetDefaults.limitDrops;

/** What an operator wants of one origin: `protectedFetch(...).stats(origin)`. */
export interface OriginStats {
  readonly origin: string;
  /** Calls in progress to the origin (retry waits included). */
  readonly active: number;
  /** The origin's breaker: its state and counts; undefined with `breaker: false`. */
  readonly breaker: CircuitBreakerStats | undefined;
  /** The origin's adaptive limit (its `limit` and calls `inFlight`); undefined with `limit: false`. */
  readonly limit: AdaptiveLimitStats | undefined;
  /** The origin's retries: waiting, made, given up. */
  readonly retries: RetryStats | undefined;
  /** The retry budget its retries and hedges spend from. */
  readonly budget: RetryBudgetStats;
}

/**
 * A call whose own deadline passed (the caller's, or the request context's) says nothing of the
 * origin's health: a caller with 50 ms left would open the breaker of a dependency that
 * answers in 60. Attempt timeouts, network errors and failed responses do count.
 */
const notOwnDeadline = (error: unknown): boolean =>
  !(error instanceof TimeoutError && error.policyName === 'execute');

/**
 * @internal The policies of one origin: a breaker, an adaptive limit, a retry budget, and the
 * pipelines built of them. A request runs through one of three pipelines, all sharing the
 * origin's breaker, limit and attempt timeout: without retries (a POST without an
 * `Idempotency-Key`, a stream body), with them, or with them and hedging.
 */
export class OriginPolicies {
  /** Calls in progress; an origin with any is never dropped. */
  active = 0;
  readonly budget: RetryBudget;
  readonly breaker: CircuitBreaker<Response> | undefined;
  readonly limit: AdaptiveLimit<Response> | undefined;
  readonly attempt: Timeout;
  readonly retry: Retry<Response> | undefined;
  readonly hedge: Hedge<Response> | undefined;
  /** Through the breaker, the limit and the attempt timeout once. */
  readonly once: Pipeline<Response>;
  readonly retrying: Pipeline<Response>;
  readonly hedged: Pipeline<Response>;

  constructor(
    readonly origin: string,
    o: ResolvedFetchOptions,
    retryAfter: (failure: AttemptFailure<Response>) => Pushback,
  ) {
    const { clock, isFailure } = o;
    this.budget = retryBudget({ ...o.budget, clock });
    this.breaker =
      o.breaker === undefined
        ? undefined
        : circuitBreaker<Response>({
            handleResult: isFailure,
            handle: notOwnDeadline,
            ...o.breaker,
            clock,
          });
    this.limit =
      o.limit === undefined
        ? undefined
        : adaptiveLimit<Response>({
            handleResult: (r) => LIMIT_DROPS.includes(r.status),
            ...o.limit,
            clock,
          });
    this.attempt = timeout({ timeout: o.attemptTimeout, clock });
    const inner = [this.breaker, this.limit, this.attempt].filter((p) => p !== undefined);
    this.once = new Pipeline<Response>(inner);
    this.retry =
      o.maxRetries === 0
        ? undefined
        : retry<Response>({
            maxAttempts: o.maxRetries + 1,
            delay: o.delay,
            maxDelay: o.maxDelay,
            backoff: 'exponential',
            jitter: 'full',
            ...(o.random === undefined ? {} : { random: o.random }),
            handleResult: isFailure,
            retryAfter,
            budget: this.budget,
            clock,
          });
    const outer = this.retry === undefined ? [] : [this.retry];
    this.retrying =
      this.retry === undefined ? this.once : new Pipeline<Response>([...outer, ...inner]);
    this.hedge =
      o.hedge === undefined
        ? undefined
        : hedge<Response>({ handleResult: isFailure, budget: this.budget, ...o.hedge, clock });
    this.hedged =
      this.hedge === undefined
        ? this.retrying
        : new Pipeline<Response>([...outer, this.hedge, ...inner]);
  }

  stats(): OriginStats {
    const { breaker, limit, retry } = this;
    return {
      origin: this.origin,
      active: this.active,
      breaker: breaker === undefined ? undefined : breaker.stats(),
      limit: limit?.stats(),
      retries: retry?.stats(),
      budget: this.budget.stats(),
    };
  }

  /** True while it must not be dropped: calls in progress, or a breaker not closed. */
  get busy(): boolean {
    return this.active !== 0 || (this.breaker !== undefined && this.breaker.state !== 'closed');
  }

  dispose(): void {
    for (const p of [this.retry, this.hedge, this.breaker, this.limit, this.attempt, this.budget]) {
      p?.dispose();
    }
  }
}

/**
 * @internal How the registry's keyed machinery keeps origins: made on first use, dropped when
 * idle or least recently used beyond the cap, never while busy. An origin holds live policies,
 * so one that is shelved is dropped whole (it holds nothing worth keeping as numbers: no call
 * in progress, a closed breaker).
 */
export function originKind(make: (origin: string) => OriginPolicies): KeyedKind<OriginPolicies> {
  return {
    stride: 0,
    create: make,
    revive: () => {},
    shelve: (origin) => {
      if (origin.busy) return false;
      origin.dispose();
      return true;
    },
    isProtected: (origin) => origin.busy,
    yieldsAtCeiling: (origin) => origin.active === 0,
    retire: () => {},
    dispose: (origin) => origin.dispose(),
  };
}
