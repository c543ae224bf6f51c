import type { Clock } from '../../clock/Clock.js';
import { CoarseTime } from '../../clock/CoarseTime.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { OptionsError, UsageError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { brand } from '../../protocol/brand.js';
import {
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
import { onlyArguments } from '../../validation/validate.js';
import { DeadlineQueue } from '../shared/DeadlineQueue.js';
import { buildFromResolved, presetName, takePreset } from '../shared/preset.js';
import { checkIdentity, reconfigureWith } from '../shared/reconfigure.js';
import { gcraDecision, type RateLimitDecision } from './decision.js';
import { RateLimitedError, refusalAt } from './errors.js';
import type { RateLimitedEvent } from './events.js';
import { gcraTake, gcraWait } from './gcra.js';
import {
  type RateLimiterOptions,
  type ResolvedRateLimiterOptions,
  resolveRateLimiterOptions,
} from './options.js';
import { ReservedTurn } from './ReservedTurn.js';

/** Options of {@link RateLimiter.acquire}. */
export interface AcquireOptions {
  /** Longest wait for the permits in ms. @default the limiter's `maxWait` */
  readonly maxWait?: number;
  /** Aborting it stops the wait: the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

const RESOLVED: Promise<void> = Promise.resolve();

/** One caller of {@link RateLimiter.acquire} waiting for its reserved turn. */
class Waiter extends ReservedTurn implements WaitingExecution {
  stamp = 0;
  constructor(
    private readonly limiter: RateLimiter,
    resolve: () => void,
    reject: (reason: unknown) => void,
    signal: AbortSignal | undefined,
    reservedTat: number,
    permits: number,
  ) {
    super(resolve, reject, signal, reservedTat, permits);
  }

  queueLive(_step: number, stamp: number): boolean {
    return !this.done && this.stamp === stamp;
  }

  queueAdmitted(): void {
    this.finish();
    this.resolve();
  }

  queueRejected(_step: number, error: Error): void {
    this.finish();
    this.reject(error);
  }

  protected giveBack(): void {
    this.limiter.giveBack(this);
  }
}

/**
 * A rate limiter by GCRA (the generic cell rate algorithm): one number, the theoretical
 * arrival time, holds its whole state. `burst` calls are admitted at once from idle, then one
 * every `period / limit` ms; a call that finds no permit is refused with the exact time until
 * one is free, or waits for it (up to `maxWait`) with its turn reserved, so waiters never
 * stampede. Times are whole microseconds.
 *
 * On the system clock the limiter reads a cached clock reading that is at most about a
 * millisecond old (see the README): an old reading only ever admits fewer calls, never more.
 *
 * @example
 * ```ts
 * const limiter = rateLimiter({ limit: 100, period: 1_000 });
 * const wait = limiter.tryAcquire();       // 0: admitted; otherwise ms until a permit is free
 * await limiter.acquire(1, { maxWait: 500 });
 * await pipeline(limiter, breaker).execute(() => fetch(url));
 * ```
 */
export class RateLimiter extends RunsAlone implements WaitingGate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  /** A rate limiter keeps no latency histogram. */
  readonly latencyEvery = 0;
  readonly name: string;
  /**
   * True when calls through a pipeline may wait for a permit (`maxWait` > 0). Pipelines read
   * it when they are built, so `reconfigure` cannot change whether the limiter waits.
   */
  readonly mayWait: boolean;
  /** The clock this policy reads. */
  readonly clock: Clock;
  /** @internal */
  protected o: ResolvedRateLimiterOptions;
  private readonly coarse: CoarseTime | undefined;
  /** Theoretical arrival time, in µs of the clock. */
  private tat = Number.NEGATIVE_INFINITY;
  private readonly queue: DeadlineQueue<WaitingExecution>;
  private error: RateLimitedError;
  /** Clock time (ms) at which the reservation made by the last `acquire(now)` is due. */
  private reservedAt = 0;
  /** @internal */
  protected nAdmitted = 0;
  private nRejected = 0;
  /** @internal */ readonly limited = new Listeners<RateLimitedEvent>();

  constructor(options: RateLimiterOptions) {
    super();
    onlyArguments(arguments, 1, 'new RateLimiter()');
    const preset = takePreset<ResolvedRateLimiterOptions>();
    const o = preset ?? resolveRateLimiterOptions(options);
    this.o = o;
    this.name = preset === undefined ? o.name : presetName();
    this.clock = o.clock;
    this.mayWait = o.maxWait > 0;
    this.coarse = o.clock.cheapNow === true ? undefined : CoarseTime.of(o.clock);
    const name = this.name;
    this.error = stackless(() => new RateLimitedError(name, o.clock, 0));
    this.queue = new DeadlineQueue<WaitingExecution>(
      o.clock,
      Number.POSITIVE_INFINITY,
      (t, stamp, step) => t.queueLive(step, stamp),
      (t, _stamp, step) => t.queueAdmitted(step),
    );
    if (options?.name !== undefined) noteCodeBuilt('rateLimiter', name, this);
  }

  /** Calls admitted at once from idle. */
  get burst(): number {
    return this.o.burst;
  }

  /** Milliseconds between two permits on average. */
  get interval(): number {
    return this.o.intervalUs / 1_000;
  }

  /** Permits that could be taken right now without waiting. */
  get available(): number {
    const now = this.nowUs(NO_TIME);
    const { intervalUs, burst } = this.o;
    const free = Math.floor(
      (now - (Math.max(this.tatUs(), now) - burst * intervalUs)) / intervalUs,
    );
    return Math.max(0, Math.min(burst, free));
  }

  /**
   * @internal Adds its counters to `sums` without building a {@link stats} object (metrics
   * sum the keys they do not list one by one).
   */
  addCounts(sums: { admitted: number; rejected: number }): void {
    sums.admitted += this.nAdmitted;
    sums.rejected += this.nRejected;
  }

  /** What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, mayWait: this.mayWait, callSlot: this.mayWait };
  }

  /** Counters since the limiter was made. */
  stats(): { admitted: number; rejected: number; waiting: number; available: number } {
    return {
      admitted: this.nAdmitted,
      rejected: this.nRejected,
      waiting: this.queue.size,
      available: this.available,
    };
  }

  /**
   * Takes `permits` (default 1) if they are free now. Returns 0 when they were taken, or else
   * the milliseconds until they would be free (nothing is taken then). Never allocates.
   *
   * Throws {@link OptionsError} when `permits` is not an integer in [1, burst]: more permits
   * than the burst could never be free at once.
   */
  tryAcquire(permits = 1): number {
    if (permits !== 1) this.checkPermits(permits);
    const nowUs = this.nowUs(NO_TIME);
    const wait = this.take(nowUs, permits);
    if (wait === 0) return 0;
    this.refused(nowUs, wait, permits);
    return wait / 1_000;
  }

  /**
   * {@link tryAcquire} with the state it leaves, for `RateLimit` headers: takes `permits`
   * (default 1) if they are free now, with the same checks, errors, events and counters, and
   * reports the permits remaining, the exact wait when refused and the time until the whole
   * burst is free again. Reservations of waiting `acquire` calls count as taken.
   *
   * @example
   * ```ts
   * const d = limiter.decide();   // { allowed, limit, windowMs, remaining, retryAfterMs, resetMs }
   * ```
   */
  decide(permits = 1): RateLimitDecision {
    if (permits !== 1) this.checkPermits(permits);
    const nowUs = this.nowUs(NO_TIME);
    const wait = this.take(nowUs, permits);
    if (wait !== 0) this.refused(nowUs, wait, permits);
    return gcraDecision(wait / 1_000, this.tatUs() - nowUs, this.o.intervalUs, this.o.burst, false);
  }

  /**
   * Takes `permits` (default 1), waiting for them up to `maxWait` ms (default: the limiter's
   * `maxWait`). The turn is reserved at once, so callers are admitted in order at the exact
   * times the rate allows. Rejects with {@link RateLimitedError} (nothing taken) when the wait
   * would be longer, and with the signal's reason when `signal` aborts (the reservation is
   * given back when no later one depends on it).
   */
  acquire(permits = 1, options?: AcquireOptions): Promise<void> {
    if (permits !== 1) this.checkPermits(permits);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const maxWait = options?.maxWait ?? this.o.maxWait;
    const nowUs = this.nowUs(NO_TIME);
    const wait = this.take(nowUs, permits);
    if (wait === 0) return RESOLVED;
    if (!(wait <= maxWait * 1_000)) {
      return Promise.reject(this.refused(nowUs, wait, permits));
    }
    const reservedTat = this.reserve(nowUs, permits);
    const dueAt = (reservedTat - this.o.burst * this.o.intervalUs) / 1_000;
    return new Promise<void>((resolve, reject) => {
      const waiter = new Waiter(this, resolve, reject, signal, reservedTat, permits);
      signal?.addEventListener('abort', waiter);
      waiter.stamp = this.queue.addAt(waiter, 0, dueAt, nowUs / 1_000);
    });
  }

  /** @internal A waiter left: its permits go back when no later reservation depends on them. */
  giveBack(waiter: Waiter): void {
    if (this.untake(waiter.reservedTat, waiter.permits)) this.nAdmitted--;
    this.queue.prune();
  }

  /** Calls `listener` when the limiter refuses permits. */
  onRejected(listener: (event: RateLimitedEvent) => void): Disposer {
    return this.limited.add(listener);
  }

  /**
   * Applies a new rate to the calls to come; permits already taken and reservations stay.
   * `options` replace the current ones as a whole; `name` and `clock` may be left out (they
   * are kept) but not changed, and `maxWait` cannot go from 0 to more or back (pipelines built
   * with the limiter depend on whether it waits).
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options: RateLimiterOptions): void {
    reconfigureWith(this, resolveRateLimiterOptions, options);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedRateLimiterOptions, name: string = o.name): void {
    checkIdentity('rateLimiter', this.name, this.clock, name, o.clock);
    if (o.maxWait > 0 !== this.mayWait) {
      throw new OptionsError(
        'maxWait',
        o.maxWait,
        this.mayWait
          ? 'a number of ms in [1, 2147483647]: a limiter built to wait cannot stop waiting; build a new one'
          : '0: a limiter built without waiting cannot be given a wait (pipelines built with it never wait on it); build a new one',
      );
    }
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedRateLimiterOptions): void {
    this.o = o;
  }

  /** Refuses every waiting caller (they fail with a {@link UsageError}) and removes listeners. */
  dispose(): void {
    const error = new UsageError(`Rate limiter "${this.name}" was disposed`);
    for (let t = this.queue.takeFirstLive(); t !== undefined; t = this.queue.takeFirstLive()) {
      t.queueRejected(this.queue.takenTag, error);
    }
    this.queue.clear();
    this.limited.clear();
  }

  // ---- the gate protocol ----------------------------------------------------------------------

  /** Admits (0), asks to wait ({@link WAIT}) or refuses ({@link REJECTED}). */
  admit(now: number): number {
    const nowUs = this.nowUs(now);
    const permits = this.o.permits;
    const wait = this.take(nowUs, permits);
    if (wait === 0) return 0;
    if (wait <= this.o.maxWait * 1_000) {
      // The turn is due when the TAT after it is a burst ahead: nowUs + wait here, later when
      // another thread sharing the state reserved in between.
      this.reservedAt = (this.reserve(nowUs, permits) - this.o.burst * this.o.intervalUs) / 1_000;
      return WAIT;
    }
    this.refused(nowUs, wait, permits);
    return REJECTED;
  }

  /** Puts `exec` in line for the turn reserved by the last admission. */
  enqueue(exec: WaitingExecution, step: number, now: number): number {
    return this.queue.addAt(exec, step, this.reservedAt, now === NO_TIME ? this.clock.now() : now);
  }

  /** A waiting execution gave up (its signal aborted); its turn is not given back. */
  leave(): void {
    this.queue.prune();
  }

  /** A rate limiter does not count outcomes. */
  release(): void {}

  /** Gate protocol (`Gate.releaseSuccess`): called by a pipeline's executor, not by users. */
  releaseSuccess(): void {}

  /** Gate protocol (`Gate.classifyError`): called by a pipeline's executor, not by users. */
  classifyError(): Outcome {
    return Outcome.Success;
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(): Outcome {
    return Outcome.Success;
  }

  /** The error of the last refusal. */
  rejection(): RateLimitedError {
    return this.error;
  }

  // ---- GCRA ----------------------------------------------------------------------------------

  /**
   * @internal The time in whole µs: `now` (ms) when the pipeline read it, else the (cached)
   * clock.
   */
  protected nowUs(now: number): number {
    const ms =
      now !== NO_TIME ? now : this.coarse !== undefined ? this.coarse.now() : this.clock.now();
    return Math.round(ms * 1_000);
  }

  /**
   * @internal Takes `permits` at `nowUs`: 0, or the µs until they would be free (nothing
   * taken). A limiter whose TAT lives elsewhere overrides it with {@link reserve},
   * {@link untake} and {@link tatUs}.
   */
  protected take(nowUs: number, permits: number): number {
    const { intervalUs, burst } = this.o;
    const wait = gcraWait(this.tat, nowUs, permits, intervalUs, burst);
    if (wait > 0) return wait;
    this.tat = gcraTake(this.tat, nowUs, permits, intervalUs);
    this.nAdmitted++;
    return 0;
  }

  /** @internal Takes `permits` ahead of time (they are due later); returns the TAT after it. */
  protected reserve(nowUs: number, permits: number): number {
    this.tat = gcraTake(this.tat, nowUs, permits, this.o.intervalUs);
    this.nAdmitted++;
    return this.tat;
  }

  /**
   * @internal Gives back `permits` reserved by the reservation that left the TAT at
   * `reservedTat`, if no later one depends on them; true when they were given back.
   */
  protected untake(reservedTat: number, permits: number): boolean {
    if (this.tat !== reservedTat) return false;
    this.tat -= permits * this.o.intervalUs;
    return true;
  }

  /** @internal The theoretical arrival time, in µs of the clock. */
  protected tatUs(): number {
    return this.tat;
  }

  private refused(nowUs: number, waitUs: number, permits: number): RateLimitedError {
    this.nRejected++;
    const freeAt = (nowUs + waitUs) / 1_000;
    const error = refusalAt(this.error, this.name, this.clock, freeAt, this.o.debug);
    this.error = error;
    if (this.limited.size !== 0) this.limited.emit({ permits, retryAfter: waitUs / 1_000 });
    if (rejectedChannel.hasSubscribers) {
      rejectedChannel.publish({
        kind: 'rateLimiter',
        name: this.name,
        reason: 'rate-limited',
        error,
      });
    }
    return error;
  }

  private checkPermits(permits: number): void {
    if (!Number.isInteger(permits) || permits < 1 || permits > this.o.burst) {
      throw new OptionsError('permits', permits, `an integer in [1, ${this.o.burst}] (the burst)`);
    }
  }
}

/**
 * @internal Builds a rate limiter from options already resolved and validated, under `name`
 * (registries build many limiters from one options object).
 */
export function rateLimiterFromResolved(o: ResolvedRateLimiterOptions, name: string): RateLimiter {
  return buildFromResolved(RateLimiter as new () => RateLimiter, o, name);
}

brand(RateLimiter, 'RateLimiter');
