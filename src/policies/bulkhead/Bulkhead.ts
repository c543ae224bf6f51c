import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { OptionsError, UsageError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { brand } from '../../protocol/brand.js';
import {
  NEEDS_NOTHING,
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
import { buildFromResolved, presetLatency, presetName, takePreset } from '../shared/preset.js';
import { checkIdentity, withIdentity } from '../shared/reconfigure.js';
import { type QueueRefusal, WaitQueue } from '../shared/WaitQueue.js';
import { BulkheadRejectedError, type BulkheadRejection } from './errors.js';
import type { BulkheadRejectedEvent } from './events.js';
import {
  type BulkheadOptions,
  type BulkheadQueue,
  type ResolvedBulkheadOptions,
  resolveBulkheadOptions,
} from './options.js';

/** Counters of a bulkhead since it was built, and what it holds now. */
export interface BulkheadStats {
  readonly inFlight: number;
  readonly queueLength: number;
  readonly maxConcurrent: number;
  /** Calls given a permit (at once or from the queue). */
  readonly admitted: number;
  /**
   * Calls refused: full (no permit and no room in the queue), queued past `queueTimeout`, or
   * waiting past `codelTarget` while the queue stood (`queue: 'codel'`).
   */
  readonly rejectionsByReason: {
    readonly full: number;
    readonly queueTimeout: number;
    readonly codel: number;
  };
  /** The `queue` option: the order in which waiting calls are admitted. */
  readonly queue: BulkheadQueue;
  /**
   * With `queue: 'codel'`: true while the queue has stood non-empty for `codelInterval` (waiting
   * calls are then admitted newest first, and those past `codelTarget` refused). Always false
   * for the other disciplines.
   */
  readonly dropping: boolean;
  /**
   * Latency of the calls it admitted since it was built, and of the last minute or so in
   * `recent`, with `metrics: { latency }` on (left out for keyed instances of a registry,
   * whose name keeps one histogram for all keys).
   */
  readonly latency?: LatencySnapshot;
}

/**
 * Caps the calls in flight at once, optionally with a bounded queue of waiting calls, served
 * FIFO, LIFO or by CoDel with adaptive LIFO (the `queue` option). Queued calls leave the queue
 * when their signal aborts or their queue timeout passes; all queue timeouts share one timer.
 * CoDel sets no timer of its own: it checks the waiting calls' ages when a call arrives or a
 * slot frees.
 *
 * @example
 * ```ts
 * const pool = new Bulkhead({ maxConcurrent: 8, maxQueue: 100, queueTimeout: 1_000 });
 * await pipeline(pool).execute(() => db.query(sql));
 * ```
 */
export class Bulkhead extends RunsAlone implements WaitingGate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly name: string;
  /** Time one call in this many for the latency histogram (0: none). */
  readonly latencyEvery: number;
  /** @internal The metrics settings it was built with. */
  readonly metrics: ResolvedMetrics;
  /** @internal The latency histogram, when kept (shared by keyed bulkheads of one name). */
  readonly latency: LatencyHistogram | undefined;
  /** The histogram is its registry name's, not its own: `stats()` leaves it out. */
  private readonly latencyShared: boolean;
  /**
   * True when calls may wait in a queue. Pipelines read it when they are built, so it never
   * changes: `reconfigure` cannot give a queue to a bulkhead built without one.
   */
  readonly mayWait: boolean;
  /** @internal True when queued calls need the time (a finite queue timeout). */
  needsQueueTime: boolean;
  /** @internal Replaced as a whole by `reconfigure`; every call reads it as before. */
  protected o: ResolvedBulkheadOptions;
  /** The clock this policy reads. */
  readonly clock: Clock;
  private active = 0;
  /** @internal */
  protected nAdmitted = 0;
  private nRejectedFull = 0;
  private nRejectedTimeout = 0;
  private nRejectedCodel = 0;
  private readonly queue: WaitQueue;
  private fullError: BulkheadRejectedError;
  private timeoutError: BulkheadRejectedError;
  /** Made when first needed: most bulkheads never refuse for CoDel. */
  private codelError: BulkheadRejectedError | undefined = undefined;
  /** @internal */ readonly rejected = new Listeners<BulkheadRejectedEvent>();

  constructor(options?: number | BulkheadOptions) {
    super();
    onlyArguments(arguments, 1, 'new Bulkhead()');
    const preset = takePreset<ResolvedBulkheadOptions>();
    const sharedLatency = preset === undefined ? undefined : presetLatency();
    const o = preset ?? resolveBulkheadOptions(options);
    const name = preset === undefined ? o.name : presetName();
    this.o = o;
    this.name = name;
    this.clock = o.clock;
    this.metrics = o.metrics;
    this.latencyEvery = o.metrics.latencyEvery;
    this.latency = this.latencyEvery === 0 ? undefined : (sharedLatency ?? new LatencyHistogram());
    this.latencyShared = sharedLatency !== undefined;
    this.mayWait = o.maxQueue > 0;
    this.needsQueueTime = this.mayWait && o.queueTimeout !== Number.POSITIVE_INFINITY;
    this.fullError = stackless(() => new BulkheadRejectedError(name, 'full', o.maxConcurrent));
    this.timeoutError = stackless(
      () => new BulkheadRejectedError(name, 'queue-timeout', o.maxConcurrent),
    );
    this.queue = new WaitQueue(
      o.clock,
      o,
      (step) => step,
      (reason) => this.refuseQueued(reason),
    );
    if (typeof options === 'object' && options.name !== undefined) {
      noteCodeBuilt('bulkhead', name, this);
    }
  }

  /** Calls in flight now. */
  get inFlight(): number {
    return this.active;
  }

  /** Calls waiting in the queue now. */
  get queueLength(): number {
    return this.queue.length;
  }

  /** The `maxConcurrent` option. */
  get maxConcurrent(): number {
    return this.o.maxConcurrent;
  }

  /**
   * @internal Adds its counters and what it holds now to `sums` without building a
   * {@link stats} object (metrics sum the keys they do not list one by one).
   */
  addCounts(sums: {
    inFlight: number;
    queueLength: number;
    admitted: number;
    rejectedFull: number;
    rejectedQueueTimeout: number;
    rejectedCodel: number;
  }): void {
    sums.inFlight += this.inFlight;
    sums.queueLength += this.queue.length;
    sums.admitted += this.nAdmitted;
    sums.rejectedFull += this.nRejectedFull;
    sums.rejectedQueueTimeout += this.nRejectedTimeout;
    sums.rejectedCodel += this.nRejectedCodel;
  }

  /** The `queue` option in force. */
  get queueDiscipline(): BulkheadQueue {
    return this.o.queue;
  }

  /**
   * With `queue: 'codel'`, true while the queue has stood non-empty for `codelInterval`
   * (see {@link BulkheadStats.dropping}); false otherwise.
   */
  get dropping(): boolean {
    return this.queue.dropping;
  }

  /** What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return {
      ...NEEDS_NOTHING,
      startTime: this.needsQueueTime,
      mayWait: this.mayWait,
      callSlot: this.mayWait,
    };
  }

  /** Counters since the bulkhead was built, and what it holds now. */
  stats(): BulkheadStats {
    const stats: BulkheadStats = {
      inFlight: this.inFlight,
      queueLength: this.queue.length,
      maxConcurrent: this.o.maxConcurrent,
      admitted: this.nAdmitted,
      rejectionsByReason: {
        full: this.nRejectedFull,
        queueTimeout: this.nRejectedTimeout,
        codel: this.nRejectedCodel,
      },
      queue: this.o.queue,
      dropping: this.dropping,
    };
    return this.latency === undefined || this.latencyShared
      ? stats
      : { ...stats, latency: this.latency.snapshot(this.clock.now()) };
  }

  /**
   * Applies new limits to the calls to come. Calls in flight keep their permits and queued
   * calls keep their place: a higher `maxConcurrent` admits queued calls at once, a lower one
   * admits nobody until enough calls in flight have ended. A shorter `queueTimeout` also
   * applies to calls already queued, counted from now (one deadline order serves the queue);
   * a longer one applies to calls queued from now on.
   *
   * `options` replace the current ones as a whole, as for the constructor (a number is
   * `maxConcurrent`): an option left out takes its default. `name` and `clock` may be left out
   * (they are kept) but not changed. A bulkhead built without a queue cannot be given one
   * (pipelines built with it never wait on it); a queued one may drop to `maxQueue: 0`.
   *
   * The `queue` discipline may change: the next call admitted from the queue is chosen by the
   * new one. A change to `'codel'` counts the calls already queued as arriving now, and the
   * queue as non-empty since now (so it can stand `codelInterval` later at the earliest); a
   * change away from it leaves them their `queueTimeout` deadlines.
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: number | BulkheadOptions): void {
    const o = resolveBulkheadOptions(
      typeof options === 'number'
        ? { maxConcurrent: options, name: this.name, clock: this.clock }
        : withIdentity(options, this.name, this.clock),
    );
    this.checkOptions(o);
    this.applyOptions(o);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedBulkheadOptions, name: string = o.name): void {
    checkIdentity('bulkhead', this.name, this.clock, name, o.clock);
    if (!this.mayWait && o.maxQueue > 0) {
      throw new OptionsError(
        'maxQueue',
        o.maxQueue,
        '0: a bulkhead built without a queue cannot be given one (pipelines built with it never wait on it); build a new bulkhead',
      );
    }
    checkMetricsKept(this.metrics, o.metrics);
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedBulkheadOptions): void {
    const old = this.o;
    this.o = o;
    const name = this.name;
    if (o.maxConcurrent !== old.maxConcurrent) {
      // The preallocated errors report the limit.
      this.fullError = stackless(() => new BulkheadRejectedError(name, 'full', o.maxConcurrent));
      this.timeoutError = stackless(
        () => new BulkheadRejectedError(name, 'queue-timeout', o.maxConcurrent),
      );
      this.codelError = undefined;
    }
    if (this.mayWait) {
      this.needsQueueTime = o.queueTimeout !== Number.POSITIVE_INFINITY;
      this.queue.setOptions(o);
    }
    if (this.queue.length > 0 && this.active < o.maxConcurrent) this.serve();
  }

  /** Calls `listener` when the bulkhead refuses a call. */
  onRejected(listener: (event: BulkheadRejectedEvent) => void): Disposer {
    return this.rejected.add(listener);
  }

  /** Gate protocol (`Gate.admit`): called by a pipeline's executor, not by users. */
  admit(now: number): number {
    if (this.active < this.o.maxConcurrent) {
      this.active++;
      this.nAdmitted++;
      return 0;
    }
    // A standing CoDel queue may hold calls already past their target: they make room.
    if (this.queue.canWait(now)) return WAIT;
    this.emitRejected('full');
    return REJECTED;
  }

  /** Puts `exec` in the queue at pipeline step `step`; returns its stamp. */
  enqueue(exec: WaitingExecution, step: number, now: number): number {
    return this.queue.add(exec, step, now);
  }

  /** A queued execution gave up (its signal aborted). */
  leave(): void {
    this.queue.leave();
  }

  /** Gate protocol (`Gate.release`): called by a pipeline's executor, not by users. */
  release(_token: number, _outcome: Outcome, elapsed: number): void {
    // NaN (the call was not timed) fails the comparison.
    if (elapsed >= 0 && this.latency !== undefined) this.latency.record(elapsed);
    this.active--;
    if (this.queue.length > 0 && this.active < this.o.maxConcurrent) this.serve();
  }

  /** Admits waiting calls into the free slots, in the order of the `queue` discipline. */
  private serve(): void {
    const q = this.queue;
    const newest = q.newestFirst();
    while (q.length > 0 && this.active < this.o.maxConcurrent) {
      const exec = q.next(newest);
      if (exec === undefined) break;
      this.active++;
      this.nAdmitted++;
      exec.queueAdmitted(q.takenTag);
    }
  }

  /** A waiting call is refused for `reason`: counted and told; returns the error it fails with. */
  private refuseQueued(reason: QueueRefusal): BulkheadRejectedError {
    this.emitRejected(reason);
    return this.error(reason);
  }

  /**
   * Refuses every queued call (they fail with a {@link UsageError}), cancels the queue timer
   * and removes all listeners. Calls in flight finish normally.
   */
  dispose(): void {
    this.queue.dispose(`Bulkhead "${this.name}"`);
    this.rejected.clear();
  }

  /** Gate protocol (`Gate.releaseSuccess`): called by a pipeline's executor, not by users. */
  releaseSuccess(): void {
    this.release(0, Outcome.Success, Number.NaN);
  }

  /** Gate protocol (`Gate.classifyError`): called by a pipeline's executor, not by users. */
  classifyError(): Outcome {
    return Outcome.Success;
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(): Outcome {
    return Outcome.Success;
  }

  /** Gate protocol (`Gate.rejection`): called by a pipeline's executor, not by users. */
  rejection(): BulkheadRejectedError {
    return this.error('full');
  }

  private error(reason: BulkheadRejection): BulkheadRejectedError {
    if (this.o.debug) return new BulkheadRejectedError(this.name, reason, this.o.maxConcurrent);
    return reason === 'full'
      ? this.fullError
      : reason === 'queue-timeout'
        ? this.timeoutError
        : (this.codelError ?? this.makeCodelError());
  }

  /** Apart from {@link error}: a method holding the arrow function allocates on every call. */
  private makeCodelError(): BulkheadRejectedError {
    this.codelError = stackless(
      () => new BulkheadRejectedError(this.name, 'codel', this.o.maxConcurrent),
    );
    return this.codelError;
  }

  /** @internal Counts a refusal for `reason` and tells listeners and the channel. */
  protected emitRejected(reason: BulkheadRejection): void {
    if (reason === 'full') this.nRejectedFull++;
    else if (reason === 'queue-timeout') this.nRejectedTimeout++;
    else this.nRejectedCodel++;
    if (this.rejected.size !== 0) {
      this.rejected.emit({ reason, inFlight: this.inFlight, queued: this.queue.length });
    }
    if (rejectedChannel.hasSubscribers) {
      rejectedChannel.publish({
        kind: 'bulkhead',
        name: this.name,
        reason,
        error: this.error(reason),
      });
    }
  }
}

/**
 * @internal Builds a bulkhead from options already resolved and validated, under `name`
 * (registries build many bulkheads from one options object), recording latency into
 * `latency` when it keeps a histogram.
 */
export function bulkheadFromResolved(
  o: ResolvedBulkheadOptions,
  name: string,
  latency?: LatencyHistogram,
): Bulkhead {
  return buildFromResolved(Bulkhead, o, name, latency);
}

brand(Bulkhead, 'Bulkhead');
