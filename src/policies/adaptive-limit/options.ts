import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { CRITICALITY_LEVELS, type Criticality } from '../../protocol/criticality.js';
import type { DurationString } from '../../protocol/kind.js';
import type { MetricsOptions } from '../../telemetry/metrics.js';
import {
  boolean,
  checkOptionsObject,
  duration,
  fn,
  integer,
  join,
  numberIn,
  oneOf,
} from '../../validation/validate.js';
import { MEASURED_KEYS, type ResolvedMeasured, resolveMeasured } from '../shared/commonOptions.js';
import {
  QUEUE_OPTION_KEYS,
  type QueueOptions,
  queueDefaults,
  type ResolvedQueueOptions,
  resolveQueueOptions,
} from '../shared/WaitQueue.js';
import type { LimitFunction } from './algorithms.js';

/**
 * The gradient algorithm (the default): the limit follows the ratio of the recent latency to
 * the baseline (the dependency's latency without a queue).
 * - A window whose latency is above `tolerance` × baseline, while the limit held calls back,
 *   cuts the limit by that ratio, to the middle of the tolerated band (at most by half).
 * - A window whose latency shows no queue (within a fifth of the band above the baseline),
 *   with at least half the limit in use, raises it by `growth` of itself (at least 1).
 * - Anything else holds it: the latency is tolerated, or too little of the limit is in use
 *   for the latency to say anything of it. Under steady overload the latency stays above the
 *   baseline, so the limit never creeps up.
 */
export interface GradientOptions {
  readonly kind: 'gradient';
  /** The latency tolerated, as a multiple of the baseline, in (1, 10]. @default 1.25 */
  readonly tolerance?: number;
  /** The share of the limit added per window while no queue shows, in (0, 1]. @default 0.1 */
  readonly growth?: number;
}

/**
 * The Vegas algorithm: estimates the calls waiting at the dependency,
 * `queue = limit × (1 - baseline / latency)`, and keeps it between `alpha` and `beta` times
 * log10(limit). While no queue shows (at most log10(limit)) it grows by half per window (at
 * least by `beta`), a slow start that never ends, so a capacity that grows is found in a few
 * windows; below `alpha`, by log10(limit); above `beta`, while the limit held calls back, it
 * sheds the excess queue in one step, to the middle of the band. Both need half the limit in use.
 */
export interface VegasOptions {
  readonly kind: 'vegas';
  /** The least queue sought, as a multiple of log10(limit), in (0, 100]. @default 3 */
  readonly alpha?: number;
  /** The most queue tolerated, as a multiple of log10(limit), above `alpha`, at most 100. @default 6 */
  readonly beta?: number;
}

/**
 * Additive increase, multiplicative decrease: a window with drops (or a mean latency above
 * `maxLatency`) multiplies the limit by `backoffRatio`; one with at least half the limit in
 * use adds `increase`. It reads no baseline: it suits dependencies that say when they are full
 * (timeouts, 429, 503).
 */
export interface AimdOptions {
  readonly kind: 'aimd';
  /** The factor a window with drops cuts the limit by, in [0.5, 1). @default 0.9 */
  readonly backoffRatio?: number;
  /** What a window with the limit in use and no drops adds, in [1, 1000]. @default 1 */
  readonly increase?: number;
  /** A window whose mean latency exceeds this, in ms, counts as one with drops. @default Infinity */
  readonly maxLatency?: number | DurationString | 'Infinity';
}

/** The name of a built-in algorithm, which takes its defaults. */
export type AdaptiveAlgorithmName = 'gradient' | 'vegas' | 'aimd';

/** Options of {@link AdaptiveLimit}. `T` is the result type `handleResult` sees. */
export interface AdaptiveLimitOptions<T = unknown> extends QueueOptions {
  /**
   * How the limit moves with each window's figures: `'gradient'`, `'vegas'` or `'aimd'` (or an
   * object naming one with its settings: {@link GradientOptions}, {@link VegasOptions},
   * {@link AimdOptions}), or a function of the window returning the new limit
   * ({@link LimitFunction}). The gradient and Vegas algorithms cut the limit in proportion to
   * the share of calls dropped in a window (at least by one, at most by half) and never raise
   * it then.
   * @default 'gradient'
   */
  readonly algorithm?:
    | AdaptiveAlgorithmName
    | GradientOptions
    | VegasOptions
    | AimdOptions
    | LimitFunction;
  /** The limit before the first window, in [minLimit, maxLimit]. @default 20 */
  readonly initialLimit?: number;
  /** The lowest limit, in [1, maxLimit]. @default 1 */
  readonly minLimit?: number;
  /** The highest limit, in [1, 2^31-1]. @default 1000 */
  readonly maxLimit?: number;
  /**
   * The shortest window, in ms, in [1, maxWindow]. A window also lasts at least ten times the
   * recent latency, so that calls crossing its ends weigh little in its mean. @default 1000
   */
  readonly minWindow?: number | DurationString;
  /**
   * The longest window, in ms, in [minWindow, 1 h]: a window with fewer than `minSamples`
   * calls ends then anyway, and its latency is not judged (its drops are). @default 10000
   */
  readonly maxWindow?: number | DurationString;
  /** Calls that must end in a window before its latency is judged, in [1, 2^31-1]. @default 20 */
  readonly minSamples?: number;
  /**
   * Errors that are drops (the dependency shed the call: an HTTP 503 or 429, a gRPC
   * `RESOURCE_EXHAUSTED`), besides timeouts, which always are. Other errors count as answers
   * (their latency is the dependency's); refusals by other policies and the caller's own
   * cancellation say nothing of it and are ignored.
   * @default timeouts only
   */
  readonly handle?: (error: unknown) => boolean;
  /** Results that are drops (a response with status 503 or 429). @default none */
  readonly handleResult?: (result: T) => boolean;
  /**
   * Shares of the limit kept for calls by criticality (`execute(fn, { criticality })`), each in
   * (0, 1]: `{ critical: 0.9, sheddable: 0.1 }`. They are enforced only when the whole limit is
   * in use: until then any call may borrow what another criticality leaves idle. Once it is, a
   * call is admitted while its criticality holds fewer calls than its share of the limit
   * (rounded up), even above the limit, and refused (or queued) otherwise. A criticality not
   * listed shares the share of the nearest listed one below it, or, below the lowest, of the
   * lowest.
   * @default none: one pool
   */
  readonly partitions?: { readonly [C in Criticality]?: number };
  /**
   * Refuses at once (reason `'deadline'`) a call whose time left (`execute(fn, { timeout })`, or
   * an outer timeout policy's) is below the dependency's median latency: it would more likely
   * than not time out. The median is that of the calls with a deadline timed over the last 5 to
   * 10 s (one in four is timed), once at least 10 were; until then nothing is refused for its
   * deadline.
   * @default true
   */
  readonly deadlineRefusal?: boolean;
  /** Name used in errors, events and metrics. @default "adaptiveLimit" */
  readonly name?: string;
  /** @default the system clock */
  readonly clock?: Clock;
  /** Fresh errors with stack traces instead of preallocated ones. @default false */
  readonly debug?: boolean;
  /**
   * What it reports to metric exporters; `{ latency: true }` also keeps a latency histogram of
   * the calls timed by a pipeline (see {@link MetricsOptions}). Read when it is built.
   * @default true (gauges and counters; no latency histogram)
   */
  readonly metrics?: boolean | MetricsOptions;
}

/** Defaults of {@link AdaptiveLimitOptions} and of each algorithm's settings. */
export const adaptiveLimitDefaults = Object.freeze({
  algorithm: 'gradient' as AdaptiveAlgorithmName,
  initialLimit: 20,
  minLimit: 1,
  maxLimit: 1000,
  minWindow: 1000,
  maxWindow: 10_000,
  minSamples: 20,
  deadlineRefusal: true,
  ...queueDefaults,
  name: 'adaptiveLimit',
  gradient: Object.freeze({ tolerance: 1.25, growth: 0.1 }),
  vegas: Object.freeze({ alpha: 3, beta: 6 }),
  aimd: Object.freeze({ backoffRatio: 0.9, increase: 1, maxLatency: Number.POSITIVE_INFINITY }),
});

/** An algorithm's settings, resolved. */
export type ResolvedAlgorithm =
  | { readonly kind: 'gradient'; readonly tolerance: number; readonly growth: number }
  | { readonly kind: 'vegas'; readonly alpha: number; readonly beta: number }
  | {
      readonly kind: 'aimd';
      readonly backoffRatio: number;
      readonly increase: number;
      readonly maxLatency: number;
    }
  | { readonly kind: 'custom'; readonly decide: LimitFunction };

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedAdaptiveLimitOptions extends ResolvedQueueOptions, ResolvedMeasured {
  algorithm: ResolvedAlgorithm;
  initialLimit: number;
  minLimit: number;
  maxLimit: number;
  minWindow: number;
  maxWindow: number;
  minSamples: number;
  handle: ((error: unknown) => boolean) | undefined;
  handleResult: ((result: unknown) => boolean) | undefined;
  /** Shares of the limit by criticality, or undefined for one pool. */
  partitions: ResolvedPartitions | undefined;
  deadlineRefusal: boolean;
}

const KEYS = [
  'algorithm',
  'initialLimit',
  'minLimit',
  'maxLimit',
  'minWindow',
  'maxWindow',
  'minSamples',
  'handle',
  'handleResult',
  'partitions',
  'deadlineRefusal',
  ...QUEUE_OPTION_KEYS,
  ...MEASURED_KEYS,
];

const MAX_INT32 = 2_147_483_647;
const ALGORITHMS: readonly AdaptiveAlgorithmName[] = ['gradient', 'vegas', 'aimd'];

/** @internal */
export function resolveAdaptiveLimitOptions<T>(
  options: AdaptiveLimitOptions<T> | undefined,
): ResolvedAdaptiveLimitOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const d = adaptiveLimitDefaults;
  const maxLimit = integer(o.maxLimit, 'maxLimit', d.maxLimit, 1, MAX_INT32);
  const minLimit = integer(o.minLimit, 'minLimit', Math.min(d.minLimit, maxLimit), 1, maxLimit);
  const initialLimit = integer(
    o.initialLimit,
    'initialLimit',
    Math.min(Math.max(d.initialLimit, minLimit), maxLimit),
    minLimit,
    maxLimit,
  );
  const maxWindow = duration(o.maxWindow, 'maxWindow', d.maxWindow, 1, false, 3_600_000);
  const minWindow = duration(
    o.minWindow,
    'minWindow',
    Math.min(d.minWindow, maxWindow),
    1,
    false,
    maxWindow,
  );
  const queue = resolveQueueOptions(o);
  return {
    algorithm: resolveAlgorithm(o.algorithm),
    initialLimit,
    minLimit,
    maxLimit,
    minWindow,
    maxWindow,
    minSamples: integer(o.minSamples, 'minSamples', d.minSamples, 1, MAX_INT32),
    handle: fn(o.handle, 'handle', undefined),
    handleResult: fn(o.handleResult, 'handleResult', undefined),
    partitions: resolvePartitions(o.partitions),
    deadlineRefusal: boolean(o.deadlineRefusal, 'deadlineRefusal', d.deadlineRefusal),
    ...queue,
    ...resolveMeasured(o, d.name),
  };
}

function resolveAlgorithm(value: unknown): ResolvedAlgorithm {
  if (typeof value === 'function') return { kind: 'custom', decide: value as LimitFunction };
  if (value === undefined || typeof value === 'string') {
    const kind = oneOf(value, 'algorithm', adaptiveLimitDefaults.algorithm, ALGORITHMS);
    return resolveAlgorithm({ kind });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError(
      'algorithm',
      value,
      `"gradient", "vegas" or "aimd", an object with one of them as \`kind\`, or a function of the window`,
    );
  }
  const kind = oneOf(
    (value as { kind?: unknown }).kind,
    'algorithm.kind',
    undefined as never,
    ALGORITHMS,
  );
  if (kind === undefined) {
    throw new OptionsError('algorithm.kind', undefined, 'one of "gradient", "vegas", "aimd"');
  }
  const path = (key: string) => join('algorithm', key);
  switch (kind) {
    case 'gradient': {
      const a = checkOptionsObject(value, ['kind', 'tolerance', 'growth'], 'algorithm');
      const g = adaptiveLimitDefaults.gradient;
      return {
        kind,
        tolerance: numberIn(a.tolerance, path('tolerance'), g.tolerance, 1, 10, true),
        growth: numberIn(a.growth, path('growth'), g.growth, 0, 1, true),
      };
    }
    case 'vegas': {
      const a = checkOptionsObject(value, ['kind', 'alpha', 'beta'], 'algorithm');
      const v = adaptiveLimitDefaults.vegas;
      const alpha = numberIn(a.alpha, path('alpha'), v.alpha, 0, 100, true);
      const beta = numberIn(a.beta, path('beta'), Math.max(v.beta, alpha * 2), alpha, 100, true);
      return { kind, alpha, beta };
    }
    case 'aimd': {
      const a = checkOptionsObject(
        value,
        ['kind', 'backoffRatio', 'increase', 'maxLatency'],
        'algorithm',
      );
      const m = adaptiveLimitDefaults.aimd;
      const backoffRatio = numberIn(a.backoffRatio, path('backoffRatio'), m.backoffRatio, 0.5, 1);
      if (backoffRatio >= 1) {
        throw new OptionsError(
          path('backoffRatio'),
          backoffRatio,
          'a number in [0.5, 1): a window with drops must cut the limit',
        );
      }
      return {
        kind,
        backoffRatio,
        increase: integer(a.increase, path('increase'), m.increase, 1, 1000),
        maxLatency: duration(a.maxLatency, path('maxLatency'), m.maxLatency, 1, true),
      };
    }
  }
}

/**
 * Partitions by criticality: the levels listed own a share of the limit; every level
 * counts under one of them (`of[level]`, a listed level).
 */
export interface ResolvedPartitions {
  /** The share of each listed level (0 for the others). */
  readonly shares: Float64Array;
  /** The listed level each level counts under: itself, the nearest listed below, or the lowest. */
  readonly of: Uint8Array;
}

function resolvePartitions(value: unknown): ResolvedPartitions | undefined {
  if (value === undefined) return undefined;
  const o = checkOptionsObject(value, CRITICALITY_LEVELS, 'partitions');
  const shares = new Float64Array(CRITICALITY_LEVELS.length);
  const listed: number[] = [];
  CRITICALITY_LEVELS.forEach((level, i) => {
    if (o[level] === undefined) return;
    shares[i] = numberIn(o[level], join('partitions', level), 0, 0, 1, true);
    listed.push(i);
  });
  if (listed.length === 0) {
    throw new OptionsError(
      'partitions',
      value,
      'an object giving at least one criticality its share of the limit, such as { critical: 0.9, sheddable: 0.1 }',
    );
  }
  // Each share is room of its own above what the others use: together at most the limit.
  const sum = shares.reduce((a, b) => a + b, 0);
  if (sum > 1 + 1e-9) {
    throw new OptionsError(
      'partitions',
      value,
      `shares that sum to at most 1 (these sum to ${Number(sum.toFixed(6))}, which would let more calls in flight than the limit)`,
    );
  }
  const of = new Uint8Array(CRITICALITY_LEVELS.length);
  for (let i = 0; i < of.length; i++) {
    const below = listed.filter((l) => l <= i);
    of[i] = below.length > 0 ? below[below.length - 1]! : listed[0]!;
  }
  return { shares, of };
}
