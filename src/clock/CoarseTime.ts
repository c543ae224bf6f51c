import type { Clock, TimerHandle } from './Clock.js';

/** Readings served from the cache between two real ones, at most. */
const MAX_SERVED = 63;
/** How long a reading stays in the cache, in ms. */
const TICK_MS = 1;

const byClock = new WeakMap<Clock, CoarseTime>();

/**
 * @internal A reading of a clock that is costly to read (about 50 ns for the system clock),
 * cached for at most {@link TICK_MS} ms and {@link MAX_SERVED} uses. A timer shared by all users
 * of the clock marks the cache stale every tick while the cache is in use, and stops after a
 * tick in which nobody read it, so an idle process has no timer (and the timer never keeps the
 * process alive). The use count bounds the staleness when timers cannot run (code that never
 * yields to the event loop).
 *
 * A reading is never later than the true time, only earlier, by at most a tick plus the event
 * loop's lateness: callers use it where an early reading errs on the safe side (a rate limiter
 * admits fewer calls, never more).
 */
export class CoarseTime {
  private cached = 0;
  private fresh = false;
  private served = 0;
  private timer: TimerHandle | undefined = undefined;

  private constructor(private readonly clock: Clock) {}

  /** The instance serving `clock`. */
  static of(clock: Clock): CoarseTime {
    let c = byClock.get(clock);
    if (c === undefined) {
      c = new CoarseTime(clock);
      byClock.set(clock, c);
    }
    return c;
  }

  /** The time, possibly up to a tick old. */
  now(): number {
    // One return of the field on both paths: returning the fresh reading from `read()` on one
    // of them made V8 box the number on every call.
    if (this.fresh && this.served < MAX_SERVED) this.served++;
    else this.read();
    return this.cached;
  }

  /**
   * The time, possibly up to a tick old, without counting a use: for a caller that bounds the
   * staleness when timers cannot run itself, with {@link expire} every so many readings.
   */
  peek(): number {
    if (!this.fresh) this.read();
    return this.cached;
  }

  /** The next reading reads the clock. */
  expire(): void {
    this.fresh = false;
  }

  private read(): void {
    this.cached = this.clock.now();
    this.fresh = true;
    this.served = 0;
    if (this.timer === undefined) this.timer = this.clock.setTimer(this.tick, TICK_MS, false);
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    if (!this.fresh) return;
    this.fresh = false;
    this.timer = this.clock.setTimer(this.tick, TICK_MS, false);
  };
}
