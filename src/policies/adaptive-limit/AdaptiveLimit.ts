import type { Clock } from '../../clock/Clock.js';
import { CoarseTime } from '../../clock/CoarseTime.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { TimeoutError } from '../../errors/TimeoutError.js';
import { ask, type Disposer, Listeners } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { brand } from '../../protocol/brand.js';
import { CRITICALITY_LEVELS, type Criticality, DEFAULT_LEVEL } from '../../protocol/criticality.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import {
  type BoundedCall,
  NEEDS_NOTHING,
  NO_TIME,
  Outcome,
  REJECTED,
  StepKind,
  type StepNeeds,
  WAIT,
  type WaitingExecution,
  type WaitingGate,
} from '../../protocol/step.js';
import { rejectedChannel } from '../../telemetry/channels.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import { LatencyHistogram, type LatencySnapshot } from '../../telemetry/LatencyHistogram.js';
import { checkMetricsKept, type ResolvedMetrics } from '../../telemetry/metrics.js';
import { onlyArguments } from '../../validation/validate.js';
import { isCountedError } from '../shared/classify.js';
import { LatencyWindow } from '../shared/LatencyWindow.js';
import { checkIdentity, reconfigureWith } from '../shared/reconfigure.js';
import { type QueueDiscipline, type QueueRefusal, WaitQueue } from '../shared/WaitQueue.js';
import type { LimitChangeReason, LimitDecision } from './algorithms.js';
import { limitChangeChannel } from './diagnostics.js';
import { type AdaptiveLimitRejection, ConcurrencyLimitError } from './errors.js';
import type { AdaptiveLimitRejectedEvent, LimitChangeEvent } from './events.js';
import {
  type AdaptiveLimitOptions,
  type ResolvedAdaptiveLimitOptions,
  resolveAdaptiveLimitOptions,
} from './options.js';
import { SampleWindow } from './SampleWindow.js';

/** A criticality's share of the limit, as its stats show it. */
export interface PartitionStats {
  /** The share of the limit it is given. */
  readonly share: number;
  /** Its share as a number of calls: the share of the limit, rounded up. */
  readonly limit: number;
  /** Its calls in flight now (those of the criticalities counted with it included). */
  readonly inFlight: number;
}

/** What an adaptive limit holds now, what it has learned, and its counters since it was built. */
export interface AdaptiveLimitStats {
  /** Calls allowed in flight now. */
  readonly limit: number;
  readonly inFlight: number;
  readonly queueLength: number;
  /**
   * The mean time in flight of the calls of the last window with enough of them, in ms: the
   * dependency's recent latency. NaN until then.
   */
  readonly recentLatency: number;
  /** The estimate of the dependency's latency without a queue, in ms. NaN until then. */
  readonly baselineLatency: number;
  /**
   * The median duration of the calls with a deadline timed over the last 5 to 10 s, in ms, which
   * `deadlineRefusal` compares their time left with. NaN until 10 were timed, and without
   * `deadlineRefusal`.
   */
  readonly medianLatency: number;
  /** `gradient`, `vegas`, `aimd` or `custom`. */
  readonly algorithm: 'gradient' | 'vegas' | 'aimd' | 'custom';
  /** What the last window decided (a change, or why it held the limit); `none` before the first. */
  readonly decision: LimitDecision | 'none';
  /** Windows ended so far. */
  readonly windows: number;
  /** Calls given a permit (at once or from the queue). */
  readonly admitted: number;
  /** Calls that ended, by how they count: answered, dropped, or ignored. */
  readonly samples: {
    readonly answered: number;
    readonly dropped: number;
    readonly ignored: number;
  };
  /** Calls refused, by reason. */
  readonly rejectionsByReason: {
    readonly limit: number;
    readonly queueTimeout: number;
    readonly codel: number;
    readonly deadline: number;
  };
  /** The `queue` option: the order in which waiting calls are admitted. */
  readonly queue: QueueDiscipline;
  /** With `queue: 'codel'`: true while the queue stands (see the bulkhead's `dropping`). */
  readonly dropping: boolean;
  /** With `partitions`: each listed criticality's share. */
  readonly partitions?: { readonly [C in Criticality]?: PartitionStats };
  /**
   * Latency of the calls pipelines timed, with `metrics: { latency }` on (see the bulkhead's).
   */
  readonly latency?: LatencySnapshot;
}

/** Calls between two readings of the clock forced by this limit (see `release`). */
const PEEKS = 256;

/** Timed calls the median of `deadlineRefusal` needs, and the half of the time it covers, ms. */
const MEDIAN_SAMPLES = 10;
const MEDIAN_HALF_WINDOW = 5_000;

/**
 * An adaptive concurrency limit: caps the calls in flight at once, like a bulkhead, at a limit
 * it learns from the dependency's latency and drops. Time is cut into windows; the call that
 * ends a window (never a timer) hands its figures to the algorithm, which raises the limit
 * while the latency shows no queue at the dependency and cuts it when the latency rises past
 * what it tolerates or calls are dropped (see {@link AdaptiveLimitOptions.algorithm}).
 *
 * No call is timed for its limit: it adds up the calls in flight over time and divides by the
 * calls that ended (Little's law), reading a coarse clock when a call starts and ends. Calls
 * with a deadline whose time left is below the dependency's median latency (timed on some of
 * the calls with a deadline) are refused before they start. With
 * `partitions`, shares of the limit are kept for calls by criticality once it is full; with
 * `maxQueue`, calls wait for a permit in a queue like the bulkhead's.
 *
 * @example
 * ```ts
 * const limit = adaptiveLimit({ handleResult: (r: Response) => r.status === 503 });
 * limit.onLimitChange((e) => log.info(`limit ${e.from} -> ${e.to} (${e.reason})`));
 * await pipeline(limit).execute(({ signal }) => fetch(url, { signal }));
 * ```
 */
export class AdaptiveLimit<T = unknown> extends RunsAlone implements WaitingGate {
  /** Type only: the result type `handleResult` sees. Never set. */
  declare readonly [RESULT_TYPE]?: T;
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly name: string;
  /** The clock this policy reads. */
  readonly clock: Clock;
  /** Time one call in this many for the latency histogram (0: none). */
  readonly latencyEvery: number;
  /** @internal The metrics settings it was built with. */
  readonly metrics: ResolvedMetrics;
  /** @internal The latency histogram, when kept. */
  readonly latency: LatencyHistogram | undefined;
  /** True when calls may wait in a queue (fixed when it is built, as for the bulkhead). */
  readonly mayWait: boolean;
  private o: ResolvedAdaptiveLimitOptions;
  private readonly coarse: CoarseTime | undefined;
  private lim: number;
  private active = 0;
  /** What the calls add to the window being collected, and what the windows taught. */
  private readonly window: SampleWindow;
  /** Calls left before a release reads the clock whatever the coarse cache holds. */
  private peeks = PEEKS;
  /** The median of the timed calls, made at the first one when `deadlineRefusal` is on. */
  private median: LatencyWindow | undefined = undefined;
  private nAdmitted = 0;
  /** Calls held back by a full limit (refused or queued). */
  private nHeld = 0;
  private readonly nRejected = { limit: 0, queueTimeout: 0, codel: 0, deadline: 0 };
  // Partitions: the in-flight calls and the limit of each listed criticality level.
  private partOf: Uint8Array | undefined;
  private readonly partActive = new Int32Array(CRITICALITY_LEVELS.length);
  private readonly partLimit = new Int32Array(CRITICALITY_LEVELS.length);
  private readonly queue: WaitQueue | undefined;
  /** The level of the call `admit` just told to wait, which `enqueue` puts in line next. */
  private waitingLevel = DEFAULT_LEVEL;
  /** @internal True when queued calls need the time (a finite queue timeout). */
  needsQueueTime: boolean;
  private readonly errors: (ConcurrencyLimitError | undefined)[] = [];
  /** The error of the refusal just made, which `rejection()` hands out. */
  private lastError: ConcurrencyLimitError;
  /** @internal */ readonly rejected = new Listeners<AdaptiveLimitRejectedEvent>();
  /** @internal */ readonly changed = new Listeners<LimitChangeEvent>();

  constructor(options?: AdaptiveLimitOptions<T>) {
    super();
    onlyArguments(arguments, 1, 'new AdaptiveLimit()');
    const o = resolveAdaptiveLimitOptions(options);
    this.o = o;
    this.name = o.name;
    this.clock = o.clock;
    this.metrics = o.metrics;
    this.latencyEvery = o.metrics.latencyEvery;
    this.latency = this.latencyEvery === 0 ? undefined : new LatencyHistogram();
    this.coarse = o.clock.cheapNow === true ? undefined : CoarseTime.of(o.clock);
    this.lim = o.initialLimit;
    this.partOf = o.partitions?.of;
    this.sharePartitions();
    this.window = new SampleWindow(o.clock.now(), o.minWindow);
    this.mayWait = o.maxQueue > 0;
    this.needsQueueTime = this.mayWait && o.queueTimeout !== Number.POSITIVE_INFINITY;
    this.queue = this.mayWait
      ? new WaitQueue(
          o.clock,
          o,
          (tag) => tag >> 2,
          (reason) => this.refuseQueued(reason),
        )
      : undefined;
    this.lastError = this.error('limit', Number.NaN, Number.NaN);
    if (options?.name !== undefined) noteCodeBuilt('adaptiveLimit', o.name, this);
  }

  /** Calls allowed in flight now. */
  get limit(): number {
    return this.lim;
  }

  /** Calls in flight now. */
  get inFlight(): number {
    return this.active;
  }

  /** Calls waiting in the queue now. */
  get queueLength(): number {
    return this.queue?.length ?? 0;
  }

  /** What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return {
      ...NEEDS_NOTHING,
      startTime: this.needsQueueTime,
      mayWait: this.mayWait,
      // The token is the call's level when partitions count it; a queue keeps its stamp there.
      callSlot: this.mayWait || this.partOf !== undefined,
      deadline: this.o.deadlineRefusal,
      boundedLatency: this.o.deadlineRefusal,
    };
  }

  /** What it holds now, what it has learned, and its counters since it was built. */
  stats(): AdaptiveLimitStats {
    const r = this.nRejected;
    const stats: AdaptiveLimitStats = {
      limit: this.lim,
      inFlight: this.active,
      queueLength: this.queueLength,
      recentLatency: this.window.recent,
      baselineLatency: this.window.baseline,
      medianLatency: this.median === undefined ? Number.NaN : this.median.read(this.clock.now()),
      algorithm: this.o.algorithm.kind,
      decision: this.window.decided,
      windows: this.window.windows,
      admitted: this.nAdmitted,
      samples: this.window.samples(),
      rejectionsByReason: { ...r },
      queue: this.o.queue,
      dropping: this.queue?.dropping ?? false,
    };
    const withParts =
      this.partOf === undefined ? stats : { ...stats, partitions: this.partitionStats() };
    return this.latency === undefined
      ? withParts
      : { ...withParts, latency: this.latency.snapshot(this.clock.now()) };
  }

  private partitionStats(): { [C in Criticality]?: PartitionStats } {
    const out: { [C in Criticality]?: PartitionStats } = {};
    const shares = this.o.partitions!.shares;
    CRITICALITY_LEVELS.forEach((criticality, level) => {
      if (shares[level] === 0) return;
      out[criticality] = {
        share: shares[level]!,
        limit: this.partLimit[level]!,
        inFlight: this.partActive[level]!,
      };
    });
    return out;
  }

  /** Calls `listener` when a window changes the limit. */
  onLimitChange(listener: (event: LimitChangeEvent) => void): Disposer {
    return this.changed.add(listener);
  }

  /** Calls `listener` when the limit refuses a call. */
  onRejected(listener: (event: AdaptiveLimitRejectedEvent) => void): Disposer {
    return this.rejected.add(listener);
  }

  /**
   * Applies new options as a whole, as for the constructor: an option left out takes its
   * default. What it has learned is kept: the limit (moved into a new `minLimit`..`maxLimit`,
   * reason `'reconfigure'`; `initialLimit` is not applied again), the baseline and the
   * window being collected; a new algorithm takes over from the next window. `name` and
   * `clock` may be left out (they are kept) but not changed. What pipelines read when they are
   * built cannot change: a queue (`maxQueue` above 0) for one built without, `partitions` for
   * one built without, `deadlineRefusal`, and `metrics`.
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: AdaptiveLimitOptions<T>): void {
    reconfigureWith(this, resolveAdaptiveLimitOptions, options);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedAdaptiveLimitOptions): void {
    checkIdentity('adaptive limit', this.name, this.clock, o.name, o.clock);
    if (!this.mayWait && o.maxQueue > 0) {
      throw new OptionsError(
        'maxQueue',
        o.maxQueue,
        '0: an adaptive limit built without a queue cannot be given one (pipelines built with it never wait on it); build a new one',
      );
    }
    if ((this.partOf === undefined) !== (o.partitions === undefined)) {
      throw new OptionsError(
        'partitions',
        o.partitions === undefined ? undefined : 'given',
        `${this.partOf === undefined ? 'left out' : 'given'}, as when it was built (pipelines built with it keep each call's criticality or not); build a new one`,
      );
    }
    if (o.deadlineRefusal !== this.o.deadlineRefusal) {
      throw new OptionsError(
        'deadlineRefusal',
        o.deadlineRefusal,
        `${this.o.deadlineRefusal}, as when it was built (pipelines built with it follow the deadlines or not); build a new one`,
      );
    }
    checkMetricsKept(this.metrics, o.metrics);
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedAdaptiveLimitOptions): void {
    this.o = o;
    this.partOf = o.partitions?.of;
    if (this.queue !== undefined) {
      this.needsQueueTime = o.queueTimeout !== Number.POSITIVE_INFINITY;
      this.queue.setOptions(o);
    }
    const clamped = Math.min(o.maxLimit, Math.max(o.minLimit, this.lim));
    if (clamped !== this.lim) this.setLimit(clamped, 'reconfigure');
    else this.sharePartitions();
    if (this.queue !== undefined && this.queue.length > 0 && this.active < this.lim) this.serve();
  }

  /** Refuses every queued call (they fail with a `UsageError`) and removes all listeners. */
  dispose(): void {
    this.queue?.dispose(`Adaptive limit "${this.name}"`);
    this.rejected.clear();
    this.changed.clear();
  }

  /** Gate protocol (`Gate.admit`): called by a pipeline's executor, not by users. */
  admit(now: number, level = DEFAULT_LEVEL, call?: BoundedCall): number {
    if (
      call !== undefined &&
      call.bound !== Number.POSITIVE_INFINITY &&
      this.median !== undefined
    ) {
      const t = now === NO_TIME ? this.clock.now() : now;
      // A call with less time than half the dependency's calls take would more likely than not
      // time out. NaN (too few timed) fails the comparison.
      const median = this.median.read(t);
      if (call.bound - t < median) return this.refuse('deadline', call.bound - t, median);
    }
    // The coarse cache without counting a use of it (releases expire it every PEEKS calls):
    // counting cost a real reading, and its boxed number, every 64 calls.
    const t =
      now !== NO_TIME ? now : this.coarse === undefined ? this.clock.now() : this.coarse.peek();
    const parts = this.partOf;
    if (this.active < this.lim || (parts !== undefined && this.underShare(parts[level]!))) {
      this.window.started(t, this.active++);
      this.nAdmitted++;
      if (parts === undefined) return 0;
      this.partActive[parts[level]!]!++;
      return level;
    }
    this.nHeld++;
    if (this.queue?.canWait(t)) {
      this.waitingLevel = level;
      return WAIT;
    }
    return this.refuse('limit');
  }

  /** The listed level `p` holds fewer calls than its share of the limit. */
  private underShare(p: number): boolean {
    return this.partActive[p]! < this.partLimit[p]!;
  }

  /** Puts `exec`, just told to wait at `step`, in line; returns its stamp. */
  enqueue(exec: WaitingExecution, step: number, now: number): number {
    return this.queue!.add(exec, (step << 2) | this.waitingLevel, now);
  }

  /** A queued execution gave up (its signal aborted). */
  leave(): void {
    this.queue!.leave();
  }

  /** Gate protocol (`Gate.release`): called by a pipeline's executor, not by users. */
  release(token: number, outcome: Outcome, elapsed: number): void {
    const coarse = this.coarse;
    // A real reading costs an allocation: the cache goes stale with its timer's tick, or, when
    // timers cannot run (code that never yields), every PEEKS calls.
    if (coarse !== undefined && --this.peeks === 0) {
      this.peeks = PEEKS;
      coarse.expire();
    }
    const t = coarse === undefined ? this.clock.now() : coarse.peek();
    const ends = this.window.ended(t, this.active--, outcome);
    if (this.partOf !== undefined) this.partActive[this.partOf[token]!]!--;
    // NaN (the call was not timed) fails the comparisons.
    if (elapsed >= 0) {
      if (this.latency !== undefined) this.latency.record(elapsed);
      if (this.o.deadlineRefusal && outcome !== Outcome.Ignored) {
        (this.median ??= new LatencyWindow(0.5, MEDIAN_SAMPLES, MEDIAN_HALF_WINDOW)).record(
          elapsed,
          t,
        );
      }
    }
    if (ends) this.endWindow(t);
    if (this.queue !== undefined && this.queue.length > 0 && this.active < this.lim) this.serve();
  }

  /** Gate protocol (`Gate.releaseSuccess`): called by a pipeline's executor, not by users. */
  releaseSuccess(token: number, value: unknown): void {
    this.release(
      token,
      this.o.handleResult === undefined ? Outcome.Success : this.classifyResult(value),
      Number.NaN,
    );
  }

  /** A timeout or a drop by `handle` is a drop; refusals and cancellations say nothing. */
  classifyError(error: unknown): Outcome {
    if (!isCountedError(error)) return Outcome.Ignored;
    if (error instanceof TimeoutError) return Outcome.Failure;
    const h = this.o.handle;
    return h !== undefined && ask(h, error, false) ? Outcome.Failure : Outcome.Success;
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(value: unknown): Outcome {
    const h = this.o.handleResult;
    return h !== undefined && ask(h, value, false) ? Outcome.Failure : Outcome.Success;
  }

  /** The error of the refusal just made. */
  rejection(): ConcurrencyLimitError {
    return this.lastError;
  }

  /**
   * A call's end at `t` may end the window (if it holds enough calls, or has lasted
   * `maxWindow`): the limit the algorithm then decides is applied.
   */
  private endWindow(t: number): void {
    const from = this.lim;
    const to = this.window.end(t, this.o, from, this.active, this.nHeld);
    if (to !== from) this.setLimit(to, this.window.reason as LimitChangeReason);
  }

  private setLimit(to: number, reason: LimitChangeReason): void {
    const from = this.lim;
    this.lim = to;
    this.sharePartitions();
    if (this.changed.size === 0 && !limitChangeChannel.hasSubscribers) return;
    const w = this.window.last;
    const fresh = reason !== 'reconfigure';
    const event: LimitChangeEvent = {
      name: this.name,
      from,
      to,
      reason,
      latency: fresh ? w.latency : this.window.recent,
      baseline: this.window.baseline,
      answered: fresh ? w.answered : 0,
      dropped: fresh ? w.dropped : 0,
      maxInFlight: fresh ? w.maxInFlight : this.active,
    };
    if (this.changed.size !== 0) this.changed.emit(event);
    if (limitChangeChannel.hasSubscribers) limitChangeChannel.publish(event);
  }

  /** Each listed level's share of the limit, as a number of calls (rounded up, at least 1). */
  private sharePartitions(): void {
    const p = this.o.partitions;
    if (p === undefined) return;
    for (let level = 0; level < p.shares.length; level++) {
      const share = p.shares[level]!;
      this.partLimit[level] = share === 0 ? 0 : Math.max(1, Math.ceil(this.lim * share));
    }
  }

  /** Admits waiting calls into the free permits, in the order of the `queue` discipline. */
  private serve(): void {
    const q = this.queue!;
    const newest = q.newestFirst();
    const parts = this.partOf;
    while (q.length > 0 && this.active < this.lim) {
      const exec = q.next(newest);
      if (exec === undefined) break;
      const tag = q.takenTag;
      const t = this.coarse === undefined ? this.clock.now() : this.coarse.peek();
      this.window.started(t, this.active++);
      this.nAdmitted++;
      let token = 0;
      if (parts !== undefined) {
        token = tag & 3;
        this.partActive[parts[token]!]!++;
      }
      exec.queueAdmitted(tag >> 2, token);
    }
  }

  /** A waiting call is refused for `reason`: counted and told; returns the error it fails with. */
  private refuseQueued(reason: QueueRefusal): ConcurrencyLimitError {
    this.refuse(reason);
    return this.lastError;
  }

  /** Counts and tells a refusal for `reason` (`timeLeft` and `median`: a `'deadline'` one's). */
  private refuse(
    reason: AdaptiveLimitRejection,
    timeLeft = Number.NaN,
    median = Number.NaN,
  ): number {
    const r = this.nRejected;
    if (reason === 'limit') r.limit++;
    else if (reason === 'queue-timeout') r.queueTimeout++;
    else if (reason === 'codel') r.codel++;
    else r.deadline++;
    const error = this.error(reason, timeLeft, median);
    this.lastError = error;
    if (this.rejected.size !== 0) {
      this.rejected.emit({
        reason,
        limit: this.lim,
        inFlight: this.active,
        queued: this.queueLength,
        timeLeft: reason === 'deadline' ? Math.max(0, timeLeft) : Number.NaN,
        latency: median,
      });
    }
    if (rejectedChannel.hasSubscribers) {
      rejectedChannel.publish({ kind: 'adaptiveLimit', name: this.name, reason, error });
    }
    return REJECTED;
  }

  /**
   * The preallocated error of `reason`, which carries nothing particular to one call; in debug
   * mode a fresh one with the limit then, and a `'deadline'` refusal's time left and median.
   */
  private error(
    reason: AdaptiveLimitRejection,
    timeLeft: number,
    median: number,
  ): ConcurrencyLimitError {
    if (this.o.debug) {
      const error = new ConcurrencyLimitError(this.name, reason, this.lim);
      if (reason === 'deadline') {
        error.timeLeft = Math.max(0, timeLeft);
        error.latency = median;
      }
      return error;
    }
    const k = reason === 'limit' ? 0 : reason === 'queue-timeout' ? 1 : reason === 'codel' ? 2 : 3;
    return this.errors[k] ?? this.makeError(k, reason);
  }

  /** Apart from the refusal: a method holding the arrow function allocates on every call. */
  private makeError(k: number, reason: ConcurrencyLimitError['reason']): ConcurrencyLimitError {
    const error = stackless(() => new ConcurrencyLimitError(this.name, reason, Number.NaN));
    this.errors[k] = error;
    return error;
  }
}

brand(AdaptiveLimit, 'AdaptiveLimit');
