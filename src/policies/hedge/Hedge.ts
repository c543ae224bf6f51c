import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { ask, type Disposer, Listeners, reportCallbackError } from '../../events/Listeners.js';
import { HedgeRace } from '../../pipeline/HedgeRace.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import {
  type HedgeReason,
  type HedgeTimerTarget,
  type HedgingStep,
  NO_PUSHBACK,
  ON_FAILURE,
} from '../../protocol/around.js';
import { brand } from '../../protocol/brand.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import { NEEDS_NOTHING, NO_TIME, StepKind, type StepNeeds } from '../../protocol/step.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import { MAX_DURATION_MS, onlyArguments } from '../../validation/validate.js';
import { DeadlineQueue } from '../shared/DeadlineQueue.js';
import { LatencyWindow } from '../shared/LatencyWindow.js';
import { askPushback } from '../shared/pushback.js';
import { checkIdentity, reconfigureWith } from '../shared/reconfigure.js';
import { hedgeChannel } from './diagnostics.js';
import type { HedgeEvent, HedgeRefusedEvent } from './events.js';
import { type HedgeOptions, type ResolvedHedgeOptions, resolveHedgeOptions } from './options.js';
import { TimerHeap } from './TimerHeap.js';

/** Counters of a hedge policy since it was built. */
export interface HedgeStats {
  /** Calls that ran through the policy (each its first attempt). */
  readonly calls: number;
  /** Hedges started: attempts beyond the first. */
  readonly hedges: number;
  /** Calls whose outcome came from a hedge rather than from their first attempt. */
  readonly won: number;
  /** Hedges the budget refused (they did not start). */
  readonly refused: number;
}

const isLive = (race: HedgeTimerTarget, stamp: number): boolean => race.hedgeLive(stamp);
const expire = (race: HedgeTimerTarget, stamp: number): void => race.hedgeDue(stamp);

/**
 * Hedging: when an attempt of the inner part of a pipeline has not answered after `delay`,
 * starts another one alongside it (up to `maxHedges`), and the call takes the first acceptable
 * outcome. A failure `handle` accepts starts the next hedge at once; any other failure ends
 * every attempt. The losers' signals abort as soon as the winner is known and the call settles
 * without waiting for them, while the policies inside the hedge keep their permits until each
 * attempt really ends. All calls share one armed timer for their delays.
 *
 * `T` is the result type of the calls it hedges, which `handleResult` sees.
 *
 * @example
 * ```ts
 * const p = pipeline(hedge({ delay: { percentile: 0.95 }, budget }), timeout(1_000));
 * await p.execute(({ signal, hedge }) => fetch(url, { signal, headers: { 'x-hedge': `${hedge}` } }));
 * ```
 */
export class Hedge<T = unknown> extends RunsAlone implements HedgingStep {
  /** Type only: the result type, read by the pipeline's typing. Never set. */
  declare readonly [RESULT_TYPE]?: T;
  readonly stepKind = StepKind.Hedge;
  readonly name: string;
  /** The clock the hedge delays run on. */
  readonly clock: Clock;
  /** @internal Replaced as a whole by `reconfigure`. */ o: ResolvedHedgeOptions;
  /** @internal True when the delay is a percentile of observed durations. */
  timesAttempts: boolean;
  /** Fixed delays: a FIFO whose timer is armed for its head. */
  private fifo: DeadlineQueue<HedgeTimerTarget> | undefined = undefined;
  /** Varying delays: a heap of deadlines. */
  private heap: TimerHeap<HedgeTimerTarget> | undefined = undefined;
  private window: LatencyWindow | undefined = undefined;
  private lost: Error | undefined = undefined;
  /** @internal */ readonly hedged = new Listeners<HedgeEvent>();
  /** @internal */ readonly refusedHedge = new Listeners<HedgeRefusedEvent>();
  private nCalls = 0;
  private nHedges = 0;
  private nWon = 0;
  private nRefused = 0;

  constructor(options?: HedgeOptions<T>) {
    super();
    onlyArguments(arguments, 1, 'new Hedge()');
    this.o = resolveHedgeOptions(options);
    this.name = this.o.name;
    this.clock = this.o.clock;
    this.timesAttempts = false;
    this.applyOptions(this.o);
    if (options?.name !== undefined) noteCodeBuilt('hedge', this.name, this);
  }

  /** Extra attempts a call may start. */
  get maxHedges(): number {
    return this.o.maxHedges;
  }

  /**
   * Applies new options to the calls that start from now on (a call in flight keeps the
   * timer of its next hedge). `options` replace the current ones as a whole, as for the
   * constructor; `name` and `clock` may be left out (they are kept) but not changed.
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: HedgeOptions<T>): void {
    reconfigureWith(this, resolveHedgeOptions, options);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedHedgeOptions): void {
    checkIdentity('hedge policy', this.name, this.clock, o.name, o.clock);
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedHedgeOptions): void {
    const previous = this.o;
    this.o = o;
    const d = o.delay;
    if (d.kind === 'fixed' && d.ms > 0) {
      if (this.fifo === undefined) {
        this.fifo = new DeadlineQueue(this.clock, d.ms, isLive, expire, !this.cheapClock, false);
      } else {
        this.fifo.setDuration(d.ms, this.clock.now());
      }
    }
    if (d.kind === 'percentile') {
      const p = previous.delay;
      const same =
        p.kind === 'percentile' &&
        this.window !== undefined &&
        p.percentile === d.percentile &&
        p.minSamples === d.minSamples &&
        p.window === d.window;
      if (!same) this.window = new LatencyWindow(d.percentile, d.minSamples, d.window / 2);
    } else {
      this.window = undefined;
    }
    this.timesAttempts = d.kind === 'percentile';
  }

  private get cheapClock(): boolean {
    return this.clock.cheapNow === true;
  }

  /** Counters since the policy was built. */
  stats(): HedgeStats {
    return { calls: this.nCalls, hedges: this.nHedges, won: this.nWon, refused: this.nRefused };
  }

  /** Calls `listener` as each hedge starts, with its number and why. */
  onHedge(listener: (event: HedgeEvent) => void): Disposer {
    return this.hedged.add(listener);
  }

  /** Calls `listener` when the budget refuses a hedge. */
  onBudgetRefused(listener: (event: HedgeRefusedEvent) => void): Disposer {
    return this.refusedHedge.add(listener);
  }

  /**
   * Clears the pending hedge timers (calls in flight start no more hedges on a delay; their
   * attempts run on) and removes all listeners. The policy stays usable.
   */
  dispose(): void {
    this.fifo?.clear();
    this.heap?.clear();
    this.hedged.clear();
    this.refusedHedge.clear();
  }

  /** @internal Hedge timers held (finished ones not yet dropped included); for tests. */
  get pending(): number {
    return (this.fifo?.size ?? 0) + (this.heap?.length ?? 0);
  }

  /** @internal What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, concurrentAttempts: true, mayWait: true, settlesEarly: true };
  }

  // ---- the race's questions ------------------------------------------------------------------

  /** @internal */
  now(): number {
    return this.clock.now();
  }

  /** @internal */
  delayBefore(hedge: number, attempt: number, now: number): number {
    const d = this.o.delay;
    switch (d.kind) {
      case 'fixed':
        return d.ms;
      case 'on-failure':
        return ON_FAILURE;
      case 'percentile': {
        const ms = this.window!.read(now);
        return Number.isNaN(ms) ? ON_FAILURE : Math.max(1, ms);
      }
      case 'function': {
        let ms: unknown;
        try {
          ms = d.of({ hedge, attempt });
        } catch (error) {
          reportCallbackError(error);
          return ON_FAILURE;
        }
        return typeof ms === 'number' && ms >= 0 && ms <= MAX_DURATION_MS ? ms : ON_FAILURE;
      }
    }
  }

  /** @internal */
  schedule(race: HedgeTimerTarget, delay: number): number {
    const d = this.o.delay;
    if (d.kind === 'fixed' && this.fifo !== undefined) {
      return this.fifo.add(race, 0, this.cheapClock ? this.clock.now() : NO_TIME);
    }
    return this.scheduleAfter(race, delay);
  }

  /** @internal */
  scheduleAfter(race: HedgeTimerTarget, ms: number): number {
    this.heap ??= new TimerHeap(this.clock, isLive, expire);
    return this.heap.add(race, ms);
  }

  /** @internal */
  pushback(isError: boolean, detail: unknown): number {
    const o = this.o;
    if (o.retryAfter === undefined) return NO_PUSHBACK;
    const pushed = askPushback(o.retryAfter, isError, detail);
    if (pushed === false) return Number.POSITIVE_INFINITY;
    if (typeof pushed !== 'number' || !(pushed > 0)) return NO_PUSHBACK;
    return pushed > o.maxPushback ? Number.POSITIVE_INFINITY : pushed;
  }

  /** @internal */
  unschedule(stamp: number): void {
    if (stamp > 0) this.fifo?.release(stamp);
    else this.heap?.release(stamp);
  }

  /** @internal */
  callStarted(): void {
    this.nCalls++;
    this.o.budget?.callStarted();
  }

  /** @internal */
  tryHedge(hedge: number, reason: HedgeReason): boolean {
    const budget = this.o.budget;
    if (budget !== undefined && !budget.trySpend()) {
      this.nRefused++;
      if (this.refusedHedge.size !== 0) this.refusedHedge.emit({ hedge, reason });
      return false;
    }
    this.nHedges++;
    if (this.hedged.size !== 0) this.hedged.emit({ hedge, reason });
    if (hedgeChannel.hasSubscribers) hedgeChannel.publish({ name: this.name, hedge, reason });
    return true;
  }

  /** @internal */
  isHandledFailure(isError: boolean, detail: unknown): boolean {
    const o = this.o;
    if (isError) return ask(o.handle, detail, false);
    return o.handleResult !== undefined && ask(o.handleResult, detail, false);
  }

  /** @internal */
  attemptEnded(_hedge: number, success: boolean, startedAt: number): void {
    const budget = this.o.budget;
    if (budget !== undefined) {
      if (success) budget.attemptSucceeded();
      else budget.attemptFailed();
    }
    if (success && this.window !== undefined && !Number.isNaN(startedAt)) {
      const now = this.clock.now();
      this.window.record(now - startedAt, now);
    }
  }

  /** @internal */
  extraEnded(_hedge: number): void {
    this.o.budget?.extraEnded();
  }

  /** @internal */
  callEnded(winner: number): void {
    if (winner > 0) this.nWon++;
    this.o.budget?.callEnded();
  }

  /** @internal */
  newRace(pool: object[]): object {
    return new HedgeRace(pool as HedgeRace[]);
  }

  /** @internal The reason the losers' signals abort with: an `AbortError`, made once. */
  lostReason(): Error {
    this.lost ??= stackless(
      () =>
        new DOMException(
          `Hedge "${this.name}": another attempt of the call won`,
          'AbortError',
        ) as Error,
    );
    return this.lost;
  }
}

brand(Hedge, 'Hedge');
