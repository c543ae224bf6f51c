import type { Clock } from '../../clock/Clock.js';
import { CoarseTime } from '../../clock/CoarseTime.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { ask, type Disposer, Listeners } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { brand } from '../../protocol/brand.js';
import { CRITICALITY_LEVELS, type Criticality, DEFAULT_LEVEL } from '../../protocol/criticality.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import {
  type Gate,
  NEEDS_NOTHING,
  NO_TIME,
  Outcome,
  REJECTED,
  StepKind,
  type StepNeeds,
} from '../../protocol/step.js';
import { rejectedChannel } from '../../telemetry/channels.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import type { ResolvedMetrics } from '../../telemetry/metrics.js';
import { onlyArguments } from '../../validation/validate.js';
import { isCountedError } from '../shared/classify.js';
import { checkIdentity, reconfigureWith } from '../shared/reconfigure.js';
import { LoadShedError } from './errors.js';
import type { LoadSignal } from './eventLoopLoad.js';
import type { LoadShedEvent } from './events.js';
import {
  type LoadShedderOptions,
  type ResolvedLoadShedderOptions,
  resolveLoadShedderOptions,
} from './options.js';
import { BUCKETS, ThrottleWindow } from './ThrottleWindow.js';

/** Counters of a load shedder since it was built, and its window now. */
export interface LoadShedderStats {
  /** Calls it let through. */
  readonly admitted: number;
  /** Calls it refused, by criticality. */
  readonly refused: { readonly [C in Criticality]: number };
  /** Requests (admitted or refused) in the window now. */
  readonly requests: number;
  /** Requests the dependency accepted in the window now. */
  readonly accepts: number;
  /** The share of calls it refuses now, in [0, `maxRefusalRate`]. */
  readonly refusalRate: number;
}

/** Calls between two real readings of the clock when timers cannot run (see `admit`). */
const PEEKS = 256;

/**
 * Client-side adaptive throttling (Google SRE, "Handling Overload"): refuses calls locally,
 * before they reach a dependency that has been accepting too few of them, with probability
 * `max(0, (requests - k × accepts) / (requests + 1))` over a sliding window, at most
 * `maxRefusalRate`, and none below `minRequests`. The refusals fall on the least critical
 * calls first: `execute(fn, { criticality: 'sheddable' })` is refused before any `critical` call
 * (the default) is.
 *
 * @example
 * ```ts
 * const shedder = loadShedder({ handleResult: (r: Response) => r.status === 503 });
 * const api = pipeline(shedder, timeout(2_000));
 * await api.execute(({ signal }) => fetch(url, { signal }), { criticality: 'sheddable' });
 * ```
 */
export class LoadShedder<T = unknown> extends RunsAlone implements Gate {
  /** Type only: the result type `handleResult` sees. Never set. */
  declare readonly [RESULT_TYPE]?: T;
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  /** A load shedder keeps no latency histogram. */
  readonly latencyEvery = 0;
  readonly mayWait = false;
  readonly name: string;
  /** The clock this policy reads. */
  readonly clock: Clock;
  /** @internal The metrics settings it was built with. */
  readonly metrics: ResolvedMetrics;
  private o: ResolvedLoadShedderOptions;
  private window: ThrottleWindow;
  private readonly coarse: CoarseTime | undefined;
  /** Calls left before one reads the clock whatever the coarse cache holds. */
  private peeks = PEEKS;
  /**
   * Calls that the formula cannot refuse, whatever they turn out to be, until time moves to
   * another bucket: each adds one request and no accept, so the formula stays at 0 for as many
   * calls as its excess is below 0, or its requests below `minRequests`. A healthy call then
   * costs a decrement instead of the formula.
   */
  private unrefused = 0;
  private nAdmitted = 0;
  private readonly nRefused = [0, 0, 0, 0];
  /**
   * The preallocated errors, one per criticality level and reason (accepts, then signal), made
   * on first use: each carries only what every refusal it serves shares.
   */
  private readonly errors: (LoadShedError | undefined)[] = new Array(8).fill(undefined);
  /** The error of the refusal just made, which `rejection()` hands out. */
  private lastError: LoadShedError | undefined;
  /** Whether the load signal, rather than the formula, set the refusal rate last read. */
  private bySignal = false;
  /** @internal */ readonly shed = new Listeners<LoadShedEvent>();

  constructor(options?: LoadShedderOptions<T>) {
    super();
    onlyArguments(arguments, 1, 'new LoadShedder()');
    const o = resolveLoadShedderOptions(options);
    this.o = o;
    this.name = o.name;
    this.clock = o.clock;
    this.metrics = o.metrics;
    this.window = new ThrottleWindow(o.window / BUCKETS);
    this.coarse = o.clock.cheapNow === true ? undefined : CoarseTime.of(o.clock);
    if (options?.name !== undefined) noteCodeBuilt('loadShedder', o.name, this);
  }

  /** What it needs of a pipeline's executor: the slot keeps each call's level. */
  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, callSlot: true };
  }

  /** The load signal it reads beside its formula (the `signal` option), if any. */
  get signal(): LoadSignal | undefined {
    return this.o.signal;
  }

  /** Counters since it was built, and its window now. */
  stats(): LoadShedderStats {
    this.advance(this.clock.now());
    const n = this.nRefused;
    return {
      admitted: this.nAdmitted,
      refused: {
        'critical-plus': n[3]!,
        critical: n[2]!,
        'sheddable-plus': n[1]!,
        sheddable: n[0]!,
      },
      requests: this.window.totalRequests,
      accepts: this.window.totalAccepts,
      refusalRate: this.o.signal === undefined ? this.refusalRate() : this.withSignal(),
    };
  }

  /**
   * The probability with which a call of `criticality` would be refused now (without counting
   * it as a request).
   */
  refusalProbability(criticality: Criticality = 'critical'): number {
    this.advance(this.clock.now());
    const rate = this.o.signal === undefined ? this.refusalRate() : this.withSignal();
    return rate === 0 ? 0 : this.levelProbability(rate, CRITICALITY_LEVELS.indexOf(criticality));
  }

  /** Calls `listener` on every refusal. */
  onShed(listener: (event: LoadShedEvent) => void): Disposer {
    return this.shed.add(listener);
  }

  /**
   * Applies new options as a whole, as for the constructor: an option left out takes its
   * default. `name` and `clock` may be left out (they are kept) but not changed. A new `window`
   * starts empty; otherwise the window keeps its counts.
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: LoadShedderOptions<T>): void {
    reconfigureWith(this, resolveLoadShedderOptions, options);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedLoadShedderOptions): void {
    checkIdentity('load shedder', this.name, this.clock, o.name, o.clock);
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedLoadShedderOptions): void {
    if (o.window !== this.o.window) this.window = new ThrottleWindow(o.window / BUCKETS);
    this.o = o;
    this.unrefused = 0;
  }

  /** Removes all listeners. The policy stays usable. */
  dispose(): void {
    this.shed.clear();
  }

  /** Lets the call through (its level) or refuses it, and counts it as a request. */
  admit(now: number, level = DEFAULT_LEVEL): number {
    // The rare paths (a clock without a cache, a refusal) are methods of their own, so that
    // this one stays small enough for V8 to inline.
    const w = this.window;
    const t = now === NO_TIME ? this.coarseNow() : now;
    if (t >= w.nextBucketAt) this.advance(t);
    // Judged on the requests before it, then counted (refused or not).
    let rate = 0;
    if (this.unrefused > 0) this.unrefused--;
    else rate = this.o.signal === undefined ? this.refusalRate() : this.withSignal();
    w.request(level);
    if (rate !== 0 && this.sheds(rate, level)) return REJECTED;
    this.nAdmitted++;
    return level;
  }

  /** Moves the window to `now`. */
  private advance(now: number): void {
    this.window.advance(now);
    // Buckets leaving the window may take more accepts than requests with them.
    this.unrefused = 0;
  }

  /** The time from the coarse cache (the clock itself when cheap to read). */
  private coarseNow(): number {
    const coarse = this.coarse;
    if (coarse === undefined) return this.clock.now();
    // The cache goes stale with its timer's tick, or, when timers cannot run (code that never
    // yields), every PEEKS calls: a bucket lasts a second.
    if (--this.peeks === 0) {
      this.peeks = PEEKS;
      coarse.expire();
    }
    return coarse.peek();
  }

  /** Draws whether a call of `level` is refused at refusal rate `rate`; refuses it if so. */
  private sheds(rate: number, level: number): boolean {
    const p = this.levelProbability(rate, level);
    if (p >= 1 || (p > 0 && this.o.random() < p)) {
      this.refuse(level, p, rate);
      return true;
    }
    return false;
  }

  /** Gate protocol (`Gate.release`): called by a pipeline's executor, not by users. */
  release(level: number, outcome: Outcome): void {
    if (outcome === Outcome.Success) this.window.accept();
    else if (outcome === Outcome.Ignored) this.window.forget(level);
  }

  /** Gate protocol (`Gate.releaseSuccess`): called by a pipeline's executor, not by users. */
  releaseSuccess(level: number, value: unknown): void {
    if (this.o.handleResult === undefined) this.window.accept();
    else this.release(level, this.classifyResult(value));
  }

  /** Gate protocol (`Gate.classifyError`): called by a pipeline's executor, not by users. */
  classifyError(error: unknown): Outcome {
    if (!isCountedError(error)) return Outcome.Ignored;
    const h = this.o.handle;
    return h === undefined || ask(h, error, true) ? Outcome.Failure : Outcome.Success;
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(value: unknown): Outcome {
    const h = this.o.handleResult;
    return h !== undefined && ask(h, value, true) ? Outcome.Failure : Outcome.Success;
  }

  /** The error of the refusal just made. */
  rejection(): LoadShedError {
    return this.lastError ?? this.errorFor(DEFAULT_LEVEL, false, Number.NaN);
  }

  /** The refusal rate when the process's own signal may ask for more than the formula. */
  private withSignal(): number {
    const rate = this.refusalRate();
    const level = this.o.signal!.level();
    this.bySignal = level > rate;
    return this.bySignal ? level : rate;
  }

  /** The SRE formula over the window, lowered by the same over its recent part. */
  private refusalRate(): number {
    const w = this.window;
    const o = this.o;
    const requests = w.totalRequests;
    // Most calls end here, with no division: enough requests accepted, or too few requests.
    const excess = requests - o.k * w.totalAccepts;
    if (excess <= 0 || requests < o.minRequests) {
      if (o.signal === undefined) {
        this.unrefused = Math.max(Math.floor(-excess), o.minRequests - requests - 1);
      }
      return 0;
    }
    let rate = excess / (requests + 1);
    // Once calls are accepted again, the recent part shows it long before the whole window.
    const recent = w.recentRequests();
    if (recent >= o.minRequests) {
      const r = (recent - o.k * w.recentAccepts()) / (recent + 1);
      if (r < rate) rate = r;
      if (rate <= 0) return 0;
    }
    return Math.min(rate, o.maxRefusalRate);
  }

  /**
   * The refusal probability of a call of `level` when a share `rate` of all requests is to be
   * refused: the refusals fall on the lowest levels first, so a level is refused only once every
   * level below it is refused entirely (by its requests in the window).
   */
  private levelProbability(rate: number, level: number): number {
    const w = this.window;
    let mass = rate * w.totalRequests;
    for (let l = 0; l < level; l++) mass -= w.levelRequests(l);
    if (mass <= 0) return 0;
    const own = w.levelRequests(level);
    return own <= mass ? 1 : mass / own;
  }

  private refuse(level: number, probability: number, rate: number): void {
    this.nRefused[level]!++;
    const bySignal = this.bySignal && this.o.signal !== undefined;
    const error = this.errorFor(level, bySignal, probability);
    this.lastError = error;
    if (this.shed.size !== 0) {
      this.shed.emit({
        criticality: error.criticality,
        probability,
        refusalRate: rate,
        reason: error.reason,
        reading: bySignal ? this.o.signal!.describe?.() : undefined,
      });
    }
    if (rejectedChannel.hasSubscribers) {
      rejectedChannel.publish({ kind: 'loadShedder', name: this.name, reason: 'load-shed', error });
    }
  }

  /** The error of a refusal at `level`: preallocated, or fresh with its details in debug mode. */
  private errorFor(level: number, bySignal: boolean, probability: number): LoadShedError {
    const criticality = CRITICALITY_LEVELS[level]!;
    const reason = bySignal ? 'signal' : 'accepts';
    if (this.o.debug) {
      const reading = bySignal ? this.o.signal!.describe?.() : undefined;
      return new LoadShedError(this.name, criticality, reason, probability, reading);
    }
    const k = level + (bySignal ? 4 : 0);
    return this.errors[k] ?? this.makeError(k, criticality, reason);
  }

  /** Apart from the refusal: a method holding the arrow function allocates on every call. */
  private makeError(
    k: number,
    criticality: LoadShedError['criticality'],
    reason: LoadShedError['reason'],
  ): LoadShedError {
    const error = stackless(() => new LoadShedError(this.name, criticality, reason));
    this.errors[k] = error;
    return error;
  }
}

brand(LoadShedder, 'LoadShedder');
