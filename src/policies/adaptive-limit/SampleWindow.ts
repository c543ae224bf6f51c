/**
 * The window that feeds an adaptive limit's algorithm: what the calls that start and end add
 * to the window being collected, and, when it ends, the figures the algorithm gets, the
 * baseline they move and the decision made. Kept apart from the limiter (admission: permits,
 * the queue, calls in flight), as Netflix keeps `Limit` apart from `Limiter`: the limiter tells
 * it of each call and applies the limit it returns.
 */
import { Outcome } from '../../protocol/step.js';
import {
  type BaselineState,
  type Decision,
  decide,
  freshBaseline,
  type LimitDecision,
  type LimitWindow,
  noQueueOf,
  updateBaseline,
} from './algorithms.js';
import type { ResolvedAdaptiveLimitOptions } from './options.js';

/** The figures of the window being collected, handed to the algorithm when it ends. */
class WindowFigures implements LimitWindow {
  limit = 0;
  latency = Number.NaN;
  baseline = Number.NaN;
  answered = 0;
  dropped = 0;
  ignored = 0;
  maxInFlight = 0;
  meanInFlight = 0;
  held = 0;
  duration = 0;
  judged = false;
}

// Slots of `SampleWindow.times`.
const LAST = 0;
const AREA = 1;
const START = 2;
const END = 3;

/** Windows last at least this many times the recent latency (see `minWindow`). */
const WINDOW_LATENCIES = 10;

/** @internal The window being collected, and what the windows ended so far have taught. */
export class SampleWindow {
  /**
   * The window being collected, in a typed array so that the per-call updates store no boxed
   * number: the calls in flight summed over time since it began (`AREA`, up to `LAST`), its
   * start and the time from which a call's end may end it.
   */
  private readonly times = new Float64Array(4);
  private wAnswered = 0;
  private wDropped = 0;
  private wIgnored = 0;
  private wMax = 0;
  private wHeldBefore = 0;
  private readonly figures = new WindowFigures();
  private readonly decision: Decision = { limit: 0, reason: 'few-samples' };
  private readonly b: BaselineState = freshBaseline();
  private recentLatency = Number.NaN;
  private lastDecision: LimitDecision | 'none' = 'none';
  private nWindows = 0;
  // Totals of the windows ended (the window being collected adds its own).
  private nAnswered = 0;
  private nDropped = 0;
  private nIgnored = 0;

  /** A first window from `now`, lasting at least `minWindow` ms. */
  constructor(now: number, minWindow: number) {
    this.times[LAST] = now;
    this.times[START] = now;
    this.times[END] = now + minWindow;
  }

  /** The mean time in flight of the calls of the last judged window without drops; NaN until then. */
  get recent(): number {
    return this.recentLatency;
  }

  /** The estimate of the dependency's latency without a queue; NaN until then. */
  get baseline(): number {
    return this.b.baseline;
  }

  /** What the last window decided; `none` before the first. */
  get decided(): LimitDecision | 'none' {
    return this.lastDecision;
  }

  /** Why the algorithm set the limit the last {@link end} returned. */
  get reason(): LimitDecision {
    return this.decision.reason;
  }

  /** The figures of the last window ended. */
  get last(): LimitWindow {
    return this.figures;
  }

  /** Windows ended so far. */
  get windows(): number {
    return this.nWindows;
  }

  /** Calls ended so far, by how they count (the window being collected included). */
  samples(): { answered: number; dropped: number; ignored: number } {
    return {
      answered: this.nAnswered + this.wAnswered,
      dropped: this.nDropped + this.wDropped,
      ignored: this.nIgnored + this.wIgnored,
    };
  }

  /** A call starts at `t`, with `active` calls in flight before it. */
  started(t: number, active: number): void {
    this.advance(t, active);
    if (active + 1 > this.wMax) this.wMax = active + 1;
  }

  /**
   * A call ends at `t` with `outcome`, with `active` calls in flight before it ended; returns
   * true when the window may end (see {@link end}).
   */
  ended(t: number, active: number, outcome: Outcome): boolean {
    this.advance(t, active);
    if (outcome === Outcome.Success) this.wAnswered++;
    else if (outcome === Outcome.Failure) this.wDropped++;
    else this.wIgnored++;
    return t >= this.times[END]!;
  }

  /** Adds the `active` calls in flight since the last reading to the window's sum, up to `t`. */
  private advance(t: number, active: number): void {
    const times = this.times;
    const last = times[LAST]!;
    // Readings of the coarse clock may come before a precise one the executor passed.
    if (t > last) {
      times[AREA]! += active * (t - last);
      times[LAST] = t;
    }
  }

  /**
   * Ends the window at `t` when it has lasted long enough and holds enough calls (or has
   * lasted `maxWindow`): moves the baseline, lets the algorithm decide, and starts the next.
   * `limit` is the limit in force, `active` the calls in flight, `held` the calls held back by a
   * full limit since the limit was built. Returns the new limit (`limit` when it holds; why in
   * {@link reason}).
   */
  end(
    t: number,
    o: ResolvedAdaptiveLimitOptions,
    limit: number,
    active: number,
    held: number,
  ): number {
    const times = this.times;
    const duration = t - times[START]!;
    const counted = this.wAnswered + this.wDropped;
    if (counted < o.minSamples && duration < o.maxWindow) return limit;
    const ended = counted + this.wIgnored;
    const w = this.figures;
    w.limit = limit;
    w.latency = ended > 0 ? times[AREA]! / ended : Number.NaN;
    w.answered = this.wAnswered;
    w.dropped = this.wDropped;
    w.ignored = this.wIgnored;
    w.maxInFlight = this.wMax;
    w.meanInFlight = duration > 0 ? times[AREA]! / duration : active;
    w.held = held - this.wHeldBefore;
    w.duration = duration;
    w.judged = counted >= o.minSamples;
    // A window with drops says how long the dropped calls were given, not how long calls take.
    let moved: string | undefined;
    if (w.judged && w.dropped === 0 && duration > 0) {
      moved = updateBaseline(this.b, w, noQueueOf(o.algorithm));
      this.recentLatency = w.latency;
    }
    w.baseline = this.b.baseline;
    let to = this.decide(w, o);
    // A probe that cannot move the limit (at minLimit) learns nothing: the algorithm decides.
    if (this.decision.reason === 'probe' && to === limit) {
      this.b.probing = false;
      to = this.decide(w, o);
    }
    const reason = this.decision.reason;
    this.b.lastCut = to < limit && (reason === 'latency' || reason === 'queue');
    this.lastDecision = moved !== undefined && to === limit ? 'baseline' : reason;
    this.nWindows++;
    this.nAnswered += this.wAnswered;
    this.nDropped += this.wDropped;
    this.nIgnored += this.wIgnored;
    times[START] = t;
    times[AREA] = 0;
    this.wAnswered = 0;
    this.wDropped = 0;
    this.wIgnored = 0;
    this.wMax = active;
    this.wHeldBefore = held;
    const span = this.recentLatency > 0 ? WINDOW_LATENCIES * this.recentLatency : 0;
    times[END] = t + Math.min(o.maxWindow, Math.max(o.minWindow, span));
    return to;
  }

  /** The algorithm's decision after window `w`, in `decision`; returns its limit, kept in range. */
  private decide(w: LimitWindow, o: ResolvedAdaptiveLimitOptions): number {
    decide(o.algorithm, w, this.decision, this.b);
    return Math.min(o.maxLimit, Math.max(o.minLimit, this.decision.limit));
  }
}
