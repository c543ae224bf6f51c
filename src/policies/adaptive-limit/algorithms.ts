import { reportCallbackError } from '../../events/Listeners.js';
import type { ResolvedAlgorithm } from './options.js';

/**
 * The figures of one window, as the algorithms (and a {@link LimitFunction}) see them. The
 * latency is measured without timing any call: the limit adds up the calls in flight over time
 * and divides by the calls that ended (Little's law), so a call costs two readings of a coarse
 * clock and no per-call record.
 */
export interface LimitWindow {
  /** The limit in force during the window. */
  readonly limit: number;
  /**
   * The mean time in flight of the calls that ended in the window, in ms (time spent in flight
   * by every call over the window, divided by the calls that ended); NaN when none ended.
   */
  readonly latency: number;
  /**
   * The dependency's latency without a queue, as estimated after this window, in ms; NaN until
   * a window had enough calls.
   */
  readonly baseline: number;
  /** Calls that ended with an answer (success, or an error that is not a drop). */
  readonly answered: number;
  /** Calls dropped: timed out, or a drop by `handle` / `handleResult`. */
  readonly dropped: number;
  /** Calls the caller cancelled, or another policy refused inside: they say nothing. */
  readonly ignored: number;
  /** The most calls in flight at once. */
  readonly maxInFlight: number;
  /** Calls in flight on average over the window. */
  readonly meanInFlight: number;
  /** Calls the limit held back (refused, or queued) because it was full. */
  readonly held: number;
  /** The window's length in ms. */
  readonly duration: number;
  /** True when at least `minSamples` calls were answered or dropped: the latency is judged. */
  readonly judged: boolean;
}

/**
 * A custom algorithm: the new limit from the figures of the window that just ended (rounded
 * down, kept within `minLimit` and `maxLimit`). A throw, or a result that is not a finite
 * number, keeps the limit (the throw goes to `setListenerErrorHandler`'s handler).
 */
export type LimitFunction = (window: LimitWindow) => number;

/**
 * Why a window changed the limit:
 * - `'drop'`: calls were dropped (timeouts, overload answers);
 * - `'latency'`: the latency rose above the tolerated band while the limit was full (gradient;
 *   AIMD: above `maxLatency`);
 * - `'queue'`: the estimated queue at the dependency was above `beta` (Vegas);
 * - `'increase'`: the latency showed room, with the limit in use;
 * - `'probe'`: the baseline was first measured with the limit full, so it may hold a queue at
 *   the dependency: the limit halves per window while the latency falls with it, then gets
 *   the last cut back (gradient and Vegas, once, at the start);
 * - `'custom'`: the limit function's answer;
 * - `'reconfigure'`: new `minLimit` / `maxLimit` options moved it into their range.
 */
export type LimitChangeReason =
  | 'drop'
  | 'latency'
  | 'queue'
  | 'increase'
  | 'probe'
  | 'custom'
  | 'reconfigure';

/**
 * What a window decided, a change or why it held the limit: `'tolerated'` (the latency is
 * within the band), `'app-limited'` (too little of the limit was in use, or the limit held
 * nobody back, for the latency to speak of it), `'few-samples'` (too few calls to judge), or
 * `'baseline'` (the latency did not fall after a cut: the dependency itself got slower, and
 * its baseline was raised to it).
 */
export type LimitDecision =
  | LimitChangeReason
  | 'tolerated'
  | 'app-limited'
  | 'few-samples'
  | 'baseline';

/** @internal A window's decision: the new limit and why. */
export interface Decision {
  limit: number;
  reason: LimitDecision;
}

/** @internal The baseline's estimate and what it needs of the last window. */
export interface BaselineState {
  /** ms; NaN until a judged window. */
  baseline: number;
  /** The last judged window's latency and mean in flight. */
  lastLatency: number;
  lastInFlight: number;
  /** The last window cut the limit for its latency. */
  lastCut: boolean;
  /** Calls ended per ms in the last window that moved the baseline. */
  throughput: number;
  /**
   * The baseline came from a window with the limit full and no cut has shown it free of a
   * queue yet: the algorithms that read it probe down (reason `'probe'`).
   */
  probing: boolean;
  /** The limit a probe that found the knee gives back (the one before its last cut), or 0. */
  kneeLimit: number;
  /** The limit of the last judged window. */
  lastLimit: number;
}

/** @internal A baseline state with nothing learned. */
export function freshBaseline(): BaselineState {
  return {
    baseline: Number.NaN,
    lastLatency: Number.NaN,
    lastInFlight: 0,
    lastCut: false,
    throughput: 0,
    probing: false,
    kneeLimit: 0,
    lastLimit: 0,
  };
}

/** The latency band above the baseline that shows no queue: a fifth of the tolerated band. */
export const noQueueBand = (tolerance: number): number => 1 + (tolerance - 1) / 5;

/** How far the baseline moves toward a lower latency per window. */
const FALL = 0.5;
/** How far it moves per window toward a latency it follows up. */
const FOLLOW = 0.1;
/** What a probe keeps of the limit. */
const PROBE_KEEP = 0.5;
/** The Vegas and AIMD algorithms, with no band of their own, use the gradient's default one. */
const DEFAULT_NO_QUEUE = noQueueBand(1.25);

/**
 * @internal Moves the baseline with judged window `w`; returns `'raised'` when it took a
 * latency a cut did not lower, `'followed'` when it moved up toward an app-limited window's
 * latency, else undefined.
 *
 * It falls at once halfway to any lower latency, and follows a latency within the no-queue
 * band by a tenth. A latency above the band leaves it alone, so that under steady overload,
 * where the latency stays above it, it never creeps up, and the limit with it. Nothing pins
 * the concurrency to re-measure it; two signs tell the dependency's own latency from a queue:
 * - the limit held nobody back, the calls ended at no higher a rate than when the baseline
 *   last moved, and the latency is higher: more load would have raised the rate, so the
 *   dependency got slower by itself, and the baseline follows by a tenth per window;
 * - a cut lowered the calls in flight by a tenth or more and the latency did not fall with
 *   them: it is not our queue, and the baseline takes it.
 */
export function updateBaseline(
  s: BaselineState,
  w: LimitWindow,
  noQueue: number,
): 'raised' | 'followed' | undefined {
  let moved: 'raised' | 'followed' | undefined;
  const b = s.baseline;
  const latency = w.latency;
  const throughput = (w.answered + w.dropped + w.ignored) / w.duration;
  if (!(b > 0)) {
    s.baseline = latency;
    s.throughput = throughput;
    s.probing = limited(w);
  } else if (s.probing) {
    // Above the dependency's capacity, a cut lowers the latency with the calls in flight (its
    // queue shortens); below it, the latency stays. Probing goes on only while the latency
    // fell by half the cut at least: halving the limit makes that a quarter, far above the
    // noise of a window's mean. A cut that did not lower the calls in flight tested nothing.
    if (latency < b) s.baseline = b + (latency - b) * FALL;
    const cut = 1 - w.meanInFlight / s.lastInFlight;
    const fell = 1 - latency / s.lastLatency;
    if (!limited(w) || !(cut > 0 && fell >= cut / 2)) {
      s.probing = false;
      // The limit before the last cut had no queue either: its latency was no higher.
      if (limited(w)) s.kneeLimit = s.lastLimit;
    }
    s.throughput = throughput;
  } else if (latency < b) {
    s.baseline = b + (latency - b) * FALL;
    s.throughput = throughput;
  } else if (latency <= b * noQueue) {
    s.baseline = b + (latency - b) * FOLLOW;
    s.throughput = throughput;
  } else if (
    s.lastCut &&
    w.meanInFlight <= 0.9 * s.lastInFlight &&
    latency >= 0.98 * s.lastLatency
  ) {
    s.baseline = latency;
    s.throughput = throughput;
    moved = 'raised';
  } else if (!limited(w) && throughput <= 1.05 * s.throughput) {
    s.baseline = b + (latency - b) * FOLLOW;
    moved = 'followed';
  }
  s.lastLatency = latency;
  s.lastInFlight = w.meanInFlight;
  s.lastLimit = w.limit;
  return moved;
}

/** The limit cut in proportion to the share of calls dropped: at least by one, at most by half. */
function dropCut(w: LimitWindow): number {
  const share = w.dropped / (w.answered + w.dropped);
  return Math.floor(w.limit * Math.max(0.5, 1 - share));
}

/** True when the limit held calls back in the window: it was reached, or someone waited. */
const limited = (w: LimitWindow): boolean => w.held > 0 || w.maxInFlight >= w.limit;
/** True when at least half the limit was in use at some point. */
const inUse = (w: LimitWindow): boolean => w.maxInFlight * 2 >= w.limit;

/**
 * @internal Decides the limit after window `w` with `algorithm`, into `out`; the baseline's
 * state `s` says whether it is still being probed (see {@link BaselineState.probing}).
 */
export function decide(
  algorithm: ResolvedAlgorithm,
  w: LimitWindow,
  out: Decision,
  s: BaselineState,
): Decision {
  const L = w.limit;
  out.limit = L;
  switch (algorithm.kind) {
    case 'gradient': {
      if (w.dropped > 0) return set(out, dropCut(w), 'drop');
      if (!w.judged) return set(out, L, 'few-samples');
      if (s.probing || s.kneeLimit > 0) return probe(s, L, out);
      const r = w.latency / w.baseline;
      const tolerance = algorithm.tolerance;
      if (r > tolerance) {
        if (!limited(w)) return set(out, L, 'app-limited');
        // Back to the middle of the tolerated band, as if the latency were all our queue.
        const target = 1 + (tolerance - 1) / 2;
        return set(out, Math.max(Math.ceil(L / 2), Math.floor((L * target) / r)), 'latency');
      }
      if (r <= noQueueBand(tolerance)) {
        if (!inUse(w)) return set(out, L, 'app-limited');
        return set(out, L + Math.max(1, Math.round(L * algorithm.growth)), 'increase');
      }
      return set(out, L, 'tolerated');
    }
    case 'vegas': {
      if (w.dropped > 0) return set(out, dropCut(w), 'drop');
      if (!w.judged) return set(out, L, 'few-samples');
      if (s.probing || s.kneeLimit > 0) return probe(s, L, out);
      const queue = Math.max(0, L * (1 - w.baseline / w.latency));
      const log = Math.max(1, Math.floor(Math.log10(L)));
      const alpha = algorithm.alpha * log;
      const beta = algorithm.beta * log;
      if (queue > beta) {
        if (!limited(w)) return set(out, L, 'app-limited');
        // The estimate says how many wait: shed the excess in one step.
        const next = Math.floor(L - queue + (alpha + beta) / 2);
        return set(out, Math.max(Math.ceil(L / 2), Math.min(L - 1, next)), 'queue');
      }
      if (queue >= alpha) return set(out, L, 'tolerated');
      if (!inUse(w)) return set(out, L, 'app-limited');
      // Slow start while no queue shows at all, then a step of log10(limit).
      return set(
        out,
        L + (queue <= log ? Math.max(Math.ceil(beta), Math.floor(L / 2)) : log),
        'increase',
      );
    }
    case 'aimd': {
      const slow = w.latency > algorithm.maxLatency;
      if (w.dropped > 0 || slow) {
        return set(
          out,
          Math.min(L - 1, Math.floor(L * algorithm.backoffRatio)),
          slow && w.dropped === 0 ? 'latency' : 'drop',
        );
      }
      if (!inUse(w)) return set(out, L, 'app-limited');
      return set(out, L + algorithm.increase, 'increase');
    }
    case 'custom': {
      let next = L;
      try {
        const answer = algorithm.decide(w);
        if (typeof answer === 'number' && Number.isFinite(answer)) next = Math.floor(answer);
      } catch (error) {
        reportCallbackError(error);
      }
      return set(out, next, 'custom');
    }
  }
}

/** A probe's step: down by half, or back to the knee it found. */
function probe(s: BaselineState, L: number, out: Decision): Decision {
  if (s.probing) return set(out, Math.floor(L * PROBE_KEEP), 'probe');
  const knee = s.kneeLimit;
  s.kneeLimit = 0;
  return set(out, Math.max(L, knee), 'probe');
}

function set(out: Decision, limit: number, reason: LimitDecision): Decision {
  out.limit = limit;
  out.reason = reason;
  return out;
}

/** @internal The no-queue band the baseline follows within, for `algorithm`. */
export function noQueueOf(algorithm: ResolvedAlgorithm): number {
  return algorithm.kind === 'gradient' ? noQueueBand(algorithm.tolerance) : DEFAULT_NO_QUEUE;
}
