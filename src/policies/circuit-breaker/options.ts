import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import {
  checkOptionsObject,
  duration,
  fn,
  integer,
  numberIn,
  oneOf,
  positiveDuration,
} from '../../validation/validate.js';
import { type ResolvedMeasured, resolveMeasured } from '../shared/commonOptions.js';
import type { CircuitBreakerSnapshot } from './snapshot.js';

/** Opens after `threshold` failures in a row (or slow calls in a row). */
export interface ConsecutiveWindowOptions {
  readonly kind: 'consecutive';
  /** Failures in a row that open the breaker. @default 5 */
  readonly threshold?: number;
}

/** Failure and slow-call rates over the last `size` calls. */
export interface CountWindowOptions {
  readonly kind: 'count';
  /** Calls remembered. @default 100 */
  readonly size?: number;
  /** Calls needed in the window before a rate is judged. @default the window size */
  readonly minimumCalls?: number;
}

/** Failure and slow-call rates over the last `duration` ms, kept in `buckets` slices. */
export interface TimeWindowOptions {
  readonly kind: 'time';
  /** Length of the window in ms, or a string like `"30s"`. @default 30000 */
  readonly duration?: number | DurationString;
  /** Slices the window is kept in; old slices expire whole. @default 10 */
  readonly buckets?: number;
  /** Calls needed in the window before a rate is judged. @default 100 */
  readonly minimumCalls?: number;
}

/** How a breaker counts failures: the `kind` picks a consecutive, count or time window. */
export type WindowOptions = ConsecutiveWindowOptions | CountWindowOptions | TimeWindowOptions;

/** How probe calls are admitted while half-open. */
export interface HalfOpenOptions {
  /** Probe calls admitted in one half-open period. @default 1 */
  readonly probes?: number;
  /** Probes in flight at once. @default 1 */
  readonly maxConcurrent?: number;
  /** Share of the probes that must succeed to close the breaker, in (0, 1]. @default 1 */
  readonly successRatio?: number;
  /**
   * Longest time in ms, from the first probe of a half-open period, that the probes may take to
   * decide before the breaker re-opens (a probe that hangs cannot keep the breaker half-open for
   * ever). A half-open breaker that nobody calls waits for its first probe, however long that
   * takes. @default 60000
   */
  readonly maxWait?: number | DurationString;
}

/**
 * Grows the break duration each time the breaker opens again, and lets the growth fall back
 * only while it stays closed: a dependency that passes one probe and fails again re-opens with
 * a longer break each time instead of the shortest one.
 */
export interface BreakBackoffOptions {
  /** Factor applied per growth step: the n-th break in a row lasts breakDuration × multiplier^(n-1). @default 2 */
  readonly multiplier?: number;
  /** Upper bound on the break duration in ms. @default 300000 */
  readonly maxDuration?: number | DurationString;
  /**
   * Time closed, in ms, that takes one growth step off the next break: closed for
   * 2.5 × `decay`, the next break is two steps shorter than it would have been. @default breakDuration
   */
  readonly decay?: number | DurationString;
}

/**
 * Options of {@link CircuitBreaker}. Every field is optional. `T` is the result type of the
 * calls it guards, which `handleResult` sees (`circuitBreaker<Response>({ ... })`, or inferred
 * from an annotated `handleResult`).
 */
export interface CircuitBreakerOptions<T = unknown> {
  /** Name used in errors, events and snapshots. @default "circuitBreaker" */
  readonly name?: string;
  /** How outcomes are remembered. @default { kind: 'count', size: 100, minimumCalls: 100 } */
  readonly window?: WindowOptions;
  /** Failure rate in (0, 1] at or above which the breaker opens (rate windows). @default 0.5 */
  readonly failureRateThreshold?: number;
  /**
   * Rate windows only: also open after this many failures in a row, whatever the rate and
   * before `minimumCalls`, so that a dependency failing every call is refused within that many
   * calls rather than once its failures outweigh a window of old successes. An integer in
   * [1, 1000000]; off when unset. (A consecutive window opens on runs alone: use its
   * `threshold`.)
   * @default undefined
   */
  readonly consecutiveFailures?: number;
  /**
   * Calls taking at least this many ms count as slow, in (0, 2147483647]; `Infinity` or unset
   * turns slow-call tracking off. Turning it on makes the pipeline read the clock around each
   * call.
   * @default undefined
   */
  readonly slowCallDuration?: number | DurationString | 'Infinity';
  /** Slow-call rate in (0, 1] at or above which the breaker opens. @default 1 */
  readonly slowCallRateThreshold?: number;
  /** How long the breaker stays open before admitting probes, in ms. @default 30000 */
  readonly breakDuration?: number | DurationString;
  /** Grow the break duration on repeated openings. Off when unset. @default undefined */
  readonly breakBackoff?: BreakBackoffOptions;
  /** Probe admission while half-open. */
  readonly halfOpen?: HalfOpenOptions;
  /**
   * Which errors count as failures. Errors for which it returns false count as successes; if
   * it throws, the call counts as failed (the error goes to `setListenerErrorHandler`).
   * Rejections by other breakwater policies (except timeouts) and cancellations by the
   * caller's own signal are never counted either way.
   * @default every error
   */
  readonly handle?: (error: unknown) => boolean;
  /** Which successful results count as failures (e.g. HTTP 503 responses). @default none */
  readonly handleResult?: (result: T) => boolean;
  /** State to start from, as produced by `toJSON()` (serverless warm starts). */
  readonly initialState?: CircuitBreakerSnapshot;
  /** Clock for time readings and for tests. @default the system clock */
  readonly clock?: Clock;
  /**
   * Reject with a fresh error carrying a stack trace on every refusal instead of one
   * preallocated, stackless error. Slower; for debugging. @default false
   */
  readonly debug?: boolean;
  /**
   * What the breaker reports to metric exporters; `{ latency: true }` also keeps a latency
   * histogram of the calls it admits (see {@link MetricsOptions}). Read when the breaker is
   * built: `reconfigure` cannot change it.
   * @default true (counters and transitions; no latency histogram)
   */
  readonly metrics?: boolean | MetricsOptions;
}

/** Options after defaults and validation. */
export interface ResolvedBreakerOptions extends ResolvedMeasured {
  windowKind: 'consecutive' | 'count' | 'time';
  threshold: number;
  size: number;
  duration: number;
  buckets: number;
  minimumCalls: number;
  failureRateThreshold: number;
  /** Failures in a row that open a rate window's breaker; Infinity when off. */
  failureRun: number;
  slowCallDuration: number;
  slowCallRateThreshold: number;
  breakDuration: number;
  backoffMultiplier: number;
  backoffMax: number;
  /** Time closed that takes one step off the backoff. */
  backoffDecay: number;
  probes: number;
  maxConcurrentProbes: number;
  successRatio: number;
  halfOpenMaxWait: number;
  handle: (error: unknown) => boolean;
  handleResult: ((result: unknown) => boolean) | undefined;
  initialState: CircuitBreakerSnapshot | undefined;
}

/** Defaults of {@link CircuitBreakerOptions}, exported so tests and docs can pin them. */
export const circuitBreakerDefaults = Object.freeze({
  name: 'circuitBreaker',
  consecutiveThreshold: 5,
  countSize: 100,
  timeDuration: 30_000,
  timeBuckets: 10,
  timeMinimumCalls: 100,
  failureRateThreshold: 0.5,
  slowCallRateThreshold: 1,
  breakDuration: 30_000,
  backoffMultiplier: 2,
  backoffMaxDuration: 300_000,
  probes: 1,
  maxConcurrentProbes: 1,
  successRatio: 1,
  halfOpenMaxWait: 60_000,
});

const KEYS = [
  'name',
  'window',
  'failureRateThreshold',
  'consecutiveFailures',
  'slowCallDuration',
  'slowCallRateThreshold',
  'breakDuration',
  'breakBackoff',
  'halfOpen',
  'handle',
  'handleResult',
  'initialState',
  'clock',
  'debug',
  'metrics',
];

const WINDOW_KEYS = ['kind', 'threshold', 'size', 'minimumCalls', 'duration', 'buckets'];
const WINDOW_KIND_KEYS: Readonly<Record<ResolvedBreakerOptions['windowKind'], readonly string[]>> =
  {
    consecutive: ['kind', 'threshold'],
    count: ['kind', 'size', 'minimumCalls'],
    time: ['kind', 'duration', 'buckets', 'minimumCalls'],
  };
const HALF_OPEN_KEYS = ['probes', 'maxConcurrent', 'successRatio', 'maxWait'];
const BACKOFF_KEYS = ['multiplier', 'maxDuration', 'decay'];
const WINDOW_KINDS: ResolvedBreakerOptions['windowKind'][] = ['consecutive', 'count', 'time'];

/** An options object left out, read as one with no field set. */
const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

const allErrors = (): boolean => true;

/** @internal Applies defaults and validates; throws {@link OptionsError} on the first bad field. */
export function resolveBreakerOptions<T>(
  options: CircuitBreakerOptions<T> | undefined,
): ResolvedBreakerOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const d = circuitBreakerDefaults;
  const w = o.window === undefined ? NONE : checkOptionsObject(o.window, WINDOW_KEYS, 'window');
  if (o.window !== undefined && w.kind === undefined) {
    throw new OptionsError('window.kind', undefined, 'one of "consecutive", "count", "time"');
  }
  const windowKind = oneOf(w.kind, 'window.kind', 'count', WINDOW_KINDS);
  if (w !== NONE) checkOptionsObject(w, WINDOW_KIND_KEYS[windowKind], 'window');
  const size = integer(w.size, 'window.size', d.countSize, 1, 1_000_000);
  const buckets = integer(w.buckets, 'window.buckets', d.timeBuckets, 1, 1000);
  const windowDuration = duration(w.duration, 'window.duration', d.timeDuration, 1);
  if (windowKind === 'time' && windowDuration / buckets < 1) {
    // Name the option the caller set: a short duration with the default bucket count is a
    // problem of the duration.
    if (w.buckets === undefined) {
      throw new OptionsError(
        'window.duration',
        windowDuration,
        `a number of ms in [${buckets}, 2147483647] (at least 1 ms per bucket, ${buckets} buckets)`,
      );
    }
    throw new OptionsError(
      'window.buckets',
      buckets,
      `an integer in [1, ${Math.floor(windowDuration)}] (at least 1 ms per bucket)`,
    );
  }
  const minimumCalls =
    windowKind === 'count'
      ? integer(w.minimumCalls, 'window.minimumCalls', size, 1, size)
      : integer(w.minimumCalls, 'window.minimumCalls', d.timeMinimumCalls, 1);

  if (windowKind === 'consecutive' && o.consecutiveFailures !== undefined) {
    throw new OptionsError(
      'consecutiveFailures',
      o.consecutiveFailures,
      'undefined with a consecutive window (its window.threshold is the run that opens it)',
    );
  }
  // At 0 every call, however quick, is slow.
  const slowCallDuration = positiveDuration(o.slowCallDuration, 'slowCallDuration');
  const backoff =
    o.breakBackoff === undefined
      ? undefined
      : checkOptionsObject(o.breakBackoff, BACKOFF_KEYS, 'breakBackoff');
  const breakDuration = duration(o.breakDuration, 'breakDuration', d.breakDuration, 1);
  const half =
    o.halfOpen === undefined ? NONE : checkOptionsObject(o.halfOpen, HALF_OPEN_KEYS, 'halfOpen');
  const probes = integer(half.probes, 'halfOpen.probes', d.probes, 1, 1_000_000);
  return shareEqual({
    windowKind,
    threshold: integer(w.threshold, 'window.threshold', d.consecutiveThreshold, 1, 1_000_000),
    size,
    duration: windowDuration,
    buckets,
    minimumCalls,
    failureRateThreshold: numberIn(
      o.failureRateThreshold,
      'failureRateThreshold',
      d.failureRateThreshold,
      0,
      1,
      true,
    ),
    failureRun: integer(
      o.consecutiveFailures,
      'consecutiveFailures',
      Number.POSITIVE_INFINITY,
      1,
      1_000_000,
    ),
    slowCallDuration,
    slowCallRateThreshold: numberIn(
      o.slowCallRateThreshold,
      'slowCallRateThreshold',
      d.slowCallRateThreshold,
      0,
      1,
      true,
    ),
    breakDuration,
    backoffMultiplier: backoff
      ? numberIn(backoff.multiplier, 'breakBackoff.multiplier', d.backoffMultiplier, 1, 1000)
      : 1,
    backoffMax: backoff
      ? duration(
          backoff.maxDuration,
          'breakBackoff.maxDuration',
          Math.max(d.backoffMaxDuration, breakDuration),
          breakDuration,
        )
      : breakDuration,
    backoffDecay: backoff
      ? duration(backoff.decay, 'breakBackoff.decay', breakDuration, 1)
      : breakDuration,
    probes,
    maxConcurrentProbes: integer(
      half.maxConcurrent,
      'halfOpen.maxConcurrent',
      Math.min(d.maxConcurrentProbes, probes),
      1,
      probes,
    ),
    successRatio: numberIn(half.successRatio, 'halfOpen.successRatio', d.successRatio, 0, 1, true),
    halfOpenMaxWait: duration(half.maxWait, 'halfOpen.maxWait', d.halfOpenMaxWait, 1),
    handle: fn(o.handle, 'handle', allErrors),
    handleResult: fn(o.handleResult, 'handleResult', undefined),
    initialState: o.initialState as CircuitBreakerSnapshot | undefined,
    ...resolveMeasured(o, d.name),
  });
}

/**
 * The options resolved last, held weakly: breakers built one after another from equal options
 * (a breaker per host, made in code) share one resolved object, as the keyed breakers of a
 * registry name do, instead of holding a copy each. Nothing mutates resolved options.
 */
let lastResolved: WeakRef<ResolvedBreakerOptions> | undefined;

function shareEqual(o: ResolvedBreakerOptions): ResolvedBreakerOptions {
  // A snapshot to start from is one breaker's own.
  if (o.initialState !== undefined) return o;
  const last = lastResolved?.deref();
  if (last !== undefined && sameResolved(last, o)) return last;
  lastResolved = new WeakRef(o);
  return o;
}

/**
 * @internal True when resolved options `a` and `b` hold the same values (functions, clocks and
 * snapshots by identity), so that one can stand for the other.
 */
export function sameResolved(a: ResolvedBreakerOptions, b: ResolvedBreakerOptions): boolean {
  // Spelled out, one field after another: a loop over the keys costs a hundred times more.
  return (
    a.name === b.name &&
    a.windowKind === b.windowKind &&
    a.threshold === b.threshold &&
    a.size === b.size &&
    a.duration === b.duration &&
    a.buckets === b.buckets &&
    a.minimumCalls === b.minimumCalls &&
    a.failureRateThreshold === b.failureRateThreshold &&
    a.failureRun === b.failureRun &&
    a.slowCallDuration === b.slowCallDuration &&
    a.slowCallRateThreshold === b.slowCallRateThreshold &&
    a.breakDuration === b.breakDuration &&
    a.backoffMultiplier === b.backoffMultiplier &&
    a.backoffMax === b.backoffMax &&
    a.backoffDecay === b.backoffDecay &&
    a.probes === b.probes &&
    a.maxConcurrentProbes === b.maxConcurrentProbes &&
    a.successRatio === b.successRatio &&
    a.halfOpenMaxWait === b.halfOpenMaxWait &&
    a.handle === b.handle &&
    a.handleResult === b.handleResult &&
    a.initialState === b.initialState &&
    a.clock === b.clock &&
    a.debug === b.debug &&
    // By identity: left out, it is a marker of its own (see `checkMetricsKept`).
    a.metrics === b.metrics
  );
}
