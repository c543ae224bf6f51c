import type { Clock, TimerHandle } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { OptionsError } from '../errors/OptionsError.js';
import { NO_TIME, type WaitingExecution } from './step.js';

/** Options of a {@link WaitLine}. */
export interface WaitLineOptions {
  /**
   * ms a call waits at most; past it the call fails with the error of {@link timedOut}.
   * @default Infinity (a call waits until admitted, or until its signal aborts)
   */
  readonly timeout?: number;
  /** Calls that may wait at once ({@link WaitLine.full} past it). @default Infinity */
  readonly maxLength?: number;
  /** The clock timeouts are measured on: the gate's. @default systemClock */
  readonly clock?: Clock;
  /** The error a call that waited `timeout` ms fails with (asked once per such call). */
  readonly timedOut: () => Error;
}

interface Waiter {
  readonly exec: WaitingExecution;
  readonly step: number;
  readonly stamp: number;
  readonly since: number;
}

/** Stamps wrap before they leave the small integers V8 keeps unboxed. */
const MAX_STAMP = 0x3fffffff;

/**
 * The line a waiting gate defined outside the library keeps its waiting calls in, oldest first.
 * The gate's `admit` answers `WAIT` when it has no permit and the line is not {@link full};
 * its `enqueue` and `leave` hand over to the line's; when a permit frees it calls
 * {@link admitNext}. The line refuses a call that waited `timeout` ms (one timer, armed only
 * while calls wait), and the executor takes a call whose signal aborts out of the line (it
 * calls the gate's `leave`). A call admitted from the line goes on with the token given to
 * `admitNext`, and is released like any other.
 *
 * @example
 * ```ts
 * class Permits implements WaitingGate {
 *   readonly mayWait = true;
 *   private free = 2;
 *   private readonly line = new WaitLine({ timeout: 500, timedOut: () => new WaitedTooLong() });
 *   admit(): number {
 *     if (this.free === 0) return this.line.full ? REJECTED : WAIT;
 *     this.free--;
 *     return 0;
 *   }
 *   enqueue(exec: WaitingExecution, step: number, now: number): number {
 *     return this.line.enqueue(exec, step, now);
 *   }
 *   leave(): void {
 *     this.line.leave();
 *   }
 *   release(): void {
 *     // The permit goes to the oldest waiting call, else back to the pool.
 *     if (!this.line.admitNext()) this.free++;
 *   }
 *   dispose(): void {
 *     this.line.rejectAll(new UsageError('permits was disposed'));
 *   }
 *   // ...the rest of Gate...
 * }
 * ```
 */
export class WaitLine {
  private readonly clock: Clock;
  private readonly timeout: number;
  private readonly maxLength: number;
  private readonly timedOut: () => Error;
  /** Entries from `head` on; those whose call left stay until they reach the head. */
  private entries: Waiter[] = [];
  private head = 0;
  private live = 0;
  private stamps = 0;
  private timer: TimerHandle | undefined = undefined;
  private readonly expire = (): void => this.expireWaiters();

  /** Throws {@link OptionsError} for a `timeout` or `maxLength` out of range. */
  constructor(options: WaitLineOptions) {
    const { timeout = Number.POSITIVE_INFINITY, maxLength = Number.POSITIVE_INFINITY } = options;
    if (typeof timeout !== 'number' || !(timeout >= 0)) {
      throw new OptionsError('timeout', timeout, 'a number of ms >= 0, or Infinity');
    }
    if (
      maxLength !== Number.POSITIVE_INFINITY &&
      !(Number.isInteger(maxLength) && maxLength >= 0)
    ) {
      throw new OptionsError('maxLength', maxLength, 'an integer >= 0, or Infinity');
    }
    if (typeof options.timedOut !== 'function') {
      throw new OptionsError('timedOut', options.timedOut, 'a function returning an Error');
    }
    this.clock = options.clock ?? systemClock;
    this.timeout = timeout;
    this.maxLength = maxLength;
    this.timedOut = options.timedOut;
  }

  /** Calls waiting now. */
  get length(): number {
    return this.live;
  }

  /** True when `maxLength` calls wait: the gate should refuse rather than answer `WAIT`. */
  get full(): boolean {
    return this.live >= this.maxLength;
  }

  /**
   * Puts `exec`, which the gate's `admit` just told to wait at `step`, in line; returns the
   * stamp the gate's `enqueue` returns. `now` is the time `admit` was given (or `NO_TIME`).
   */
  enqueue(exec: WaitingExecution, step: number, now: number): number {
    const stamp = (this.stamps = this.stamps >= MAX_STAMP ? 1 : this.stamps + 1);
    const timed = this.timeout !== Number.POSITIVE_INFINITY;
    const since = timed && now === NO_TIME ? this.clock.now() : now;
    this.entries.push({ exec, step, stamp, since });
    this.live++;
    // No timer means no older call waits. The executor notes the stamp only once this
    // returns, so the line cannot tell yet whether this call is live: it arms without asking.
    if (timed && this.timer === undefined) {
      this.timer = this.clock.setTimer(this.expire, this.timeout, false);
    }
    return stamp;
  }

  /** A waiting call gave up (its signal aborted): the gate's `leave` calls this. */
  leave(): void {
    this.live--;
    this.settled();
  }

  /**
   * Admits the oldest waiting call with `token` (what the gate's `release` will be given for
   * it). False when no call waits: the permit stays with the gate.
   */
  admitNext(token = 0): boolean {
    const w = this.takeLive();
    if (w === undefined) return false;
    this.settled();
    w.exec.queueAdmitted(w.step, token);
    return true;
  }

  /** Refuses every waiting call with `error` (the gate's `dispose` calls this). */
  rejectAll(error: Error): void {
    for (let w = this.takeLive(); w !== undefined; w = this.takeLive()) {
      w.exec.queueRejected(w.step, error);
    }
    this.settled();
  }

  /** Removes and returns the oldest live waiter, dropping the dead ones before it. */
  private takeLive(): Waiter | undefined {
    while (this.head < this.entries.length) {
      const w = this.entries[this.head++]!;
      if (live(w)) {
        this.live--;
        return w;
      }
    }
    return undefined;
  }

  /** After calls left: no timer outlives the waits, and left entries do not pile up. */
  private settled(): void {
    if (this.live === 0) {
      this.entries = [];
      this.head = 0;
      if (this.timer !== undefined) {
        this.clock.clearTimer(this.timer);
        this.timer = undefined;
      }
    } else if (this.entries.length - this.head > 2 * this.live + 16) {
      this.entries = this.entries.slice(this.head).filter(live);
      this.head = 0;
    }
  }

  /** Sets the timer for the oldest live waiter's timeout (entries are in order of arrival). */
  private arm(): void {
    const entries = this.entries;
    while (this.head < entries.length && !live(entries[this.head]!)) this.head++;
    const first = entries[this.head];
    if (first === undefined) return;
    const wait = Math.max(0, first.since + this.timeout - this.clock.now());
    this.timer = this.clock.setTimer(this.expire, wait, false);
  }

  private expireWaiters(): void {
    this.timer = undefined;
    const now = this.clock.now();
    const entries = this.entries;
    while (this.head < entries.length) {
      const w = entries[this.head]!;
      if (!live(w)) {
        this.head++;
        continue;
      }
      if (w.since + this.timeout > now) break;
      this.head++;
      this.live--;
      w.exec.queueRejected(w.step, this.timedOut());
    }
    this.settled();
    if (this.live > 0 && this.timer === undefined) this.arm();
  }
}

function live(w: Waiter): boolean {
  return w.exec.queueLive(w.step, w.stamp);
}
