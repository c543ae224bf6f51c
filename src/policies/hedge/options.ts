import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { AttemptBudget } from '../../protocol/budget.js';
import type { DurationString } from '../../protocol/kind.js';
import { checkOptionsObject, duration, fn, integer, numberIn } from '../../validation/validate.js';
import { isCountedError } from '../shared/classify.js';
import { NAMED_KEYS, type ResolvedNamed, resolveNamed } from '../shared/commonOptions.js';
import type { AttemptFailure, Pushback } from '../shared/pushback.js';

/** What a `delay` function is told: which hedge it delays, in which attempt of the call. */
export interface HedgeDelayContext {
  /** The hedge about to be timed: 1 for the first hedge (the second attempt). */
  readonly hedge: number;
  /** The call's attempt number (an outer retry's), 1 for the first. */
  readonly attempt: number;
}

/**
 * A hedge delay read from the latency the policy observes: the `percentile` of the durations
 * of the attempts that succeeded over the last `window` (read from a histogram of fixed size,
 * within 5 % of the exact value).
 */
export interface HedgePercentileDelay {
  /** The percentile, in (0, 1): 0.95 hedges an attempt slower than 95 % of recent ones. */
  readonly percentile: number;
  /**
   * No hedge starts on a delay while the window holds fewer durations than this (on a
   * failure it still does). @default 100
   */
  readonly minSamples?: number;
  /**
   * How far back the durations go, at least 100 ms: the histogram covers the last half-window
   * to window, so a change of latency shows within a window. @default 5000 (ms)
   */
  readonly window?: number | DurationString;
}

/**
 * When the next hedge starts, counted from the start of the attempt before it:
 * - a number of ms (or a duration string): a fixed delay; `0` starts every attempt at once;
 * - `'on-failure'`: only when the attempt before it fails in a way `handle` accepts;
 * - a function of {@link HedgeDelayContext} returning ms (a negative number, NaN or Infinity
 *   means on failure only);
 * - `{ percentile, minSamples, window }`: a live percentile of observed latency (at least 1 ms).
 */
export type HedgeDelay =
  | number
  | DurationString
  | 'on-failure'
  | ((context: HedgeDelayContext) => number)
  | HedgePercentileDelay;

/**
 * Options of {@link Hedge}. `T` is the result type of the calls it hedges, which
 * `handleResult` sees.
 */
export interface HedgeOptions<T = unknown> {
  /** Extra attempts a call may start, in [1, 10]. @default 1 */
  readonly maxHedges?: number;
  /** When the next hedge starts (see {@link HedgeDelay}). @default 2000 (ms) */
  readonly delay?: HedgeDelay;
  /**
   * Which errors start the next hedge at once; any other error ends every attempt and the
   * call fails with it. Refusals by other breakwater policies made without calling (an open
   * breaker, a full bulkhead) are never handled.
   * @default every error
   */
  readonly handle?: (error: unknown) => boolean;
  /**
   * Which results are failures that start the next hedge at once (an HTTP 503): a result it
   * accepts wins the race. @default none
   */
  readonly handleResult?: (result: T) => boolean;
  /**
   * A retry budget the hedges spend from (shared with retries and other hedges): a hedge the
   * budget refuses does not start. @default none (hedges limited by `maxHedges` alone)
   */
  readonly budget?: AttemptBudget;
  /**
   * Server pushback: what a failure this policy handles says about when to try again, read as
   * `retry`'s option of the same name reads it (`serverPushback` reads the usual headers). Its
   * answer replaces the wait before the next hedge, the delay pending included:
   *
   * - a delay in ms: the next hedge starts that long after the failure rather than at once;
   * - `false`, or a delay above `maxPushback` or past the call's deadline: no more hedges (the
   *   attempts in flight run on, and with none left the call fails with that failure);
   * - undefined, 0 or anything else: the next hedge starts at once, as without pushback.
   *
   * @default none
   * @example
   * ```ts
   * hedge({ delay: 'on-failure', handleResult: (r: Response) => r.status === 503, retryAfter: serverPushback });
   * ```
   */
  readonly retryAfter?: (failure: AttemptFailure<T>) => Pushback;
  /** The longest server pushback the next hedge waits for (ms or `"30s"`). @default 30000 */
  readonly maxPushback?: number | DurationString;
  /** Name used in events and metrics. @default "hedge" */
  readonly name?: string;
  /** @default the system clock */
  readonly clock?: Clock;
}

/** Defaults of {@link HedgeOptions}. */
export const hedgeDefaults = Object.freeze({
  maxHedges: 1,
  delay: 2_000,
  minSamples: 100,
  window: 5_000,
  maxPushback: 30_000,
  name: 'hedge',
});

/** The most hedges one call may start. */
export const MAX_HEDGES = 10;

/** A resolved delay. */
export type ResolvedDelay =
  | { readonly kind: 'fixed'; readonly ms: number }
  | { readonly kind: 'on-failure' }
  | { readonly kind: 'function'; readonly of: (context: HedgeDelayContext) => number }
  | {
      readonly kind: 'percentile';
      readonly percentile: number;
      readonly minSamples: number;
      readonly window: number;
    };

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedHedgeOptions extends ResolvedNamed {
  maxHedges: number;
  delay: ResolvedDelay;
  handle: (error: unknown) => boolean;
  handleResult: ((result: unknown) => boolean) | undefined;
  budget: AttemptBudget | undefined;
  retryAfter: ((failure: AttemptFailure) => Pushback) | undefined;
  maxPushback: number;
}

const KEYS = [
  'maxHedges',
  'delay',
  'handle',
  'handleResult',
  'budget',
  'retryAfter',
  'maxPushback',
  ...NAMED_KEYS,
];
const PERCENTILE_KEYS = ['percentile', 'minSamples', 'window'];
const BUDGET_METHODS = [
  'callStarted',
  'callEnded',
  'attemptSucceeded',
  'attemptFailed',
  'trySpend',
  'extraEnded',
] as const;

/** @internal */
export function resolveHedgeOptions<T>(options: HedgeOptions<T> | undefined): ResolvedHedgeOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const userHandle = fn<(error: unknown) => boolean>(o.handle, 'handle', undefined);
  return {
    maxHedges: integer(o.maxHedges, 'maxHedges', hedgeDefaults.maxHedges, 1, MAX_HEDGES),
    delay: resolveDelay(o.delay),
    handle: userHandle === undefined ? isCountedError : (e) => isCountedError(e) && userHandle(e),
    handleResult: fn(o.handleResult, 'handleResult', undefined),
    budget: budgetOption(o.budget),
    retryAfter: fn(o.retryAfter, 'retryAfter', undefined),
    maxPushback: duration(o.maxPushback, 'maxPushback', hedgeDefaults.maxPushback),
    ...resolveNamed(o, hedgeDefaults.name),
  };
}

function resolveDelay(value: unknown): ResolvedDelay {
  if (value === 'on-failure') return { kind: 'on-failure' };
  if (typeof value === 'function') {
    return { kind: 'function', of: value as (context: HedgeDelayContext) => number };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const p = checkOptionsObject(value, PERCENTILE_KEYS, 'delay');
    if (p.percentile === undefined) {
      throw new OptionsError('delay.percentile', undefined, 'a number in (0, 1)');
    }
    const percentile = numberIn(p.percentile, 'delay.percentile', 0, 0, 1, true);
    if (percentile >= 1)
      throw new OptionsError('delay.percentile', percentile, 'a number in (0, 1)');
    return {
      kind: 'percentile',
      percentile,
      minSamples: integer(p.minSamples, 'delay.minSamples', hedgeDefaults.minSamples, 1, 1e9),
      window: duration(p.window, 'delay.window', hedgeDefaults.window, 100),
    };
  }
  if (value === undefined || typeof value === 'number' || typeof value === 'string') {
    try {
      return { kind: 'fixed', ms: duration(value, 'delay', hedgeDefaults.delay, 0) };
    } catch (error) {
      if (typeof value === 'number') throw error;
    }
  }
  throw new OptionsError(
    'delay',
    value,
    'a number of ms in [0, 2147483647] (or a string like "200ms"), "on-failure", a function of the hedge returning ms, or { percentile, minSamples?, window? }',
  );
}

function budgetOption(value: unknown): AttemptBudget | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value === 'object' &&
    value !== null &&
    BUDGET_METHODS.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  ) {
    return value as AttemptBudget;
  }
  throw new OptionsError(
    'budget',
    value,
    `a retry budget (an object with ${BUDGET_METHODS.map((m) => `\`${m}\``).join(', ')})`,
  );
}
