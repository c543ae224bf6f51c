import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { isBranded, otherCopyNote } from '../../protocol/brand.js';
import type { AttemptBudget } from '../../protocol/budget.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  checkOptionsObject,
  duration,
  fn,
  integer,
  numberIn,
  oneOf,
} from '../../validation/validate.js';
import { isCountedError } from '../shared/classify.js';
import type { Pushback } from '../shared/pushback.js';
import type { RetryExhaustedError } from './errors.js';

/** How the delay grows between attempts. */
export type BackoffKind = 'constant' | 'linear' | 'exponential' | 'decorrelated';
/** How the delay is randomised. */
export type JitterKind = 'none' | 'full' | 'equal' | 'decorrelated';

import { NAMED_KEYS, type ResolvedNamed, resolveNamed } from '../shared/commonOptions.js';
import type { AttemptFailure } from '../shared/pushback.js';

export type { AttemptFailure };

/**
 * What `execute` does when retrying stops on a result that `handleResult` retries: `'resolve'`
 * with that result, or `'reject'` with a {@link RetryExhaustedError} carrying it.
 */
export type LastResult = 'resolve' | 'reject';

/**
 * Options of {@link Retry}. `T` is the result type of the calls it retries: `handleResult` and
 * `retryAfter` see results of that type (`retry<Response>({ ... })`, or inferred from an
 * annotated `handleResult`).
 */
export interface RetryOptions<T = unknown> {
  /**
   * Attempts in all, the first included. Infinity retries until `maxDuration`, which must then
   * be finite (an OptionsError otherwise: the call would never end). @default 3
   */
  readonly maxAttempts?: number;
  /** No retry starts later than this many ms after the first attempt began. @default Infinity */
  readonly maxDuration?: number | DurationString | 'Infinity';
  /**
   * - `constant`: `delay` every time;
   * - `linear`: `delay × n` before the n-th retry;
   * - `exponential`: `delay × multiplier^(n-1)`;
   * - `decorrelated`: a random delay in [`delay`, 3 × the previous delay] ("decorrelated jitter"
   *   backoff; [`delay`, 3 × `delay`] for the first retry), which is random by itself, so
   *   `jitter` is not applied on top.
   *
   * Every kind is capped at `maxDelay`. @default "exponential"
   */
  readonly backoff?: BackoffKind;
  /** The base delay in ms. @default 100 */
  readonly delay?: number | DurationString;
  /** The largest delay in ms. @default 30000 */
  readonly maxDelay?: number | DurationString;
  /** Growth factor of exponential backoff, in [1, 100]. @default 2 */
  readonly multiplier?: number;
  /**
   * - `none`: the backoff's delay as is;
   * - `full`: uniform in [0, d];
   * - `equal`: uniform in [d/2, d];
   * - `decorrelated`: uniform in [d, 3 × the previous delay] ([d, 3d] for the first retry),
   *   capped at `maxDelay`.
   * @default "full"
   */
  readonly jitter?: JitterKind;
  /** Source of randomness in [0, 1), for tests. @default Math.random */
  readonly random?: () => number;
  /**
   * Which errors are retried. Refusals by other breakwater policies (an open breaker, a full
   * bulkhead) are never retried, and neither is anything once the caller's signal aborted.
   * @default every error
   */
  readonly handle?: (error: unknown) => boolean;
  /** Which successful results are retried (e.g. HTTP 503). @default none */
  readonly handleResult?: (result: T) => boolean;
  /**
   * When retrying stops on a result `handleResult` retries (the attempts or `maxDuration` ran
   * out, or the call was cut by its signal or an outer timeout): `'resolve'` resolves the call
   * with that last result, `'reject'` rejects it with a {@link RetryExhaustedError} whose
   * `result` is that result. Errors are unaffected: the call rejects with the last error.
   * @default "resolve"
   */
  readonly lastResult?: LastResult;
  /**
   * Server pushback: what the failed attempt says about when to try again (a `Retry-After`
   * header, a 429 body). `serverPushback` (`breakwater/http`) reads the usual headers from responses and
   * errors. It returns:
   *
   * - a delay in ms: the least the next attempt waits. The delay is the larger of it and the
   *   backoff (jitter included), so a pushback of 0 or a date already past still backs off;
   * - a delay above `maxDelay` (Infinity included): the server says the call cannot succeed
   *   within what this policy waits, so it gives up at once (reason `'pushback'`);
   * - `false`: do not retry (reason `'pushback'`), e.g. a negative `grpc-retry-pushback-ms`;
   * - undefined (or a negative number, NaN, anything else): the backoff alone.
   *
   * A delay that would end past `maxDuration` gives up with `'max-duration'`, as a backoff does.
   * @default none
   */
  readonly retryAfter?: (failure: AttemptFailure<T>) => Pushback;
  /**
   * The retry budget its retries spend from, shared with other policies: a `RetryBudget` made
   * by `retryBudget(...)`, the only kind accepted. A retry the budget refuses is not made, and
   * the call ends with the give-up reason `'budget-exhausted'`. Kept by `reconfigure` when left
   * out; it cannot be changed.
   * @default none
   */
  readonly budget?: AttemptBudget;
  /** Name used in events. @default "retry" */
  readonly name?: string;
  /** @default the system clock */
  readonly clock?: Clock;
}

/** Defaults of {@link RetryOptions}. */
export const retryDefaults = Object.freeze({
  maxAttempts: 3,
  maxDuration: Number.POSITIVE_INFINITY,
  backoff: 'exponential' as BackoffKind,
  delay: 100,
  maxDelay: 30_000,
  multiplier: 2,
  jitter: 'full' as JitterKind,
  lastResult: 'resolve' as LastResult,
  name: 'retry',
});

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedRetryOptions extends ResolvedNamed {
  maxAttempts: number;
  maxDuration: number;
  backoff: BackoffKind;
  delay: number;
  maxDelay: number;
  multiplier: number;
  jitter: JitterKind;
  random: () => number;
  handle: (error: unknown) => boolean;
  handleResult: ((result: unknown) => boolean) | undefined;
  lastResult: LastResult;
  retryAfter: ((failure: AttemptFailure) => Pushback) | undefined;
  budget: AttemptBudget | undefined;
}

const KEYS = [
  'maxAttempts',
  'maxDuration',
  'backoff',
  'delay',
  'maxDelay',
  'multiplier',
  'jitter',
  'random',
  'handle',
  'handleResult',
  'lastResult',
  'retryAfter',
  'budget',
  ...NAMED_KEYS,
];

/** @internal */
export function resolveRetryOptions<T>(options: RetryOptions<T> | undefined): ResolvedRetryOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const d = retryDefaults;
  const delay = duration(o.delay, 'delay', d.delay, 0);
  const userHandle = fn<(error: unknown) => boolean>(o.handle, 'handle', undefined);
  const maxAttempts = integer(
    o.maxAttempts,
    'maxAttempts',
    d.maxAttempts,
    1,
    Number.POSITIVE_INFINITY,
  );
  const maxDuration = duration(o.maxDuration, 'maxDuration', d.maxDuration, 1, true);
  if (maxAttempts === Number.POSITIVE_INFINITY && maxDuration === Number.POSITIVE_INFINITY) {
    throw new OptionsError(
      'maxAttempts',
      maxAttempts,
      'an integer in [1, Infinity], and Infinity only with a finite `maxDuration` (it would retry for ever)',
    );
  }
  return {
    maxAttempts,
    maxDuration,
    backoff: oneOf(o.backoff, 'backoff', d.backoff, [
      'constant',
      'linear',
      'exponential',
      'decorrelated',
    ]),
    delay,
    maxDelay: duration(o.maxDelay, 'maxDelay', Math.max(d.maxDelay, delay), delay),
    multiplier: numberIn(o.multiplier, 'multiplier', d.multiplier, 1, 100),
    jitter: oneOf(o.jitter, 'jitter', d.jitter, ['none', 'full', 'equal', 'decorrelated']),
    random: fn(o.random, 'random', Math.random),
    handle: userHandle === undefined ? isCountedError : (e) => isCountedError(e) && userHandle(e),
    handleResult: fn(o.handleResult, 'handleResult', undefined),
    lastResult: oneOf(o.lastResult, 'lastResult', d.lastResult, ['resolve', 'reject']),
    retryAfter: fn(o.retryAfter, 'retryAfter', undefined),
    budget: budgetOption(o.budget),
    ...resolveNamed(o, d.name),
  };
}

function budgetOption(value: unknown): AttemptBudget | undefined {
  if (value === undefined || isBranded(value, 'RetryBudget')) return value as AttemptBudget;
  throw new OptionsError(
    'budget',
    value,
    `a RetryBudget (made by \`retryBudget(...)\`)${otherCopyNote(value)}`,
  );
}
