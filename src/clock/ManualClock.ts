import { OptionsError } from '../errors/OptionsError.js';
import { integer } from '../validation/validate.js';
import type { Clock, TimerHandle } from './Clock.js';

class ManualTimer {
  constructor(
    readonly due: number,
    readonly seq: number,
    readonly callback: () => void,
  ) {}
  cancelled = false;
}

/**
 * A clock that only moves when told to. Timers fire in order of due time (then creation
 * order), each seeing `now()` equal to its due time, so tests of time-dependent behaviour are
 * exact and never sleep.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const breaker = circuitBreaker({ clock, breakDuration: 1000 });
 * // ... trip it ...
 * clock.advance(1000); // the breaker is now half-open
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: ManualTimer[] = [];
  /**
   * Policies read this clock whenever they need the time (default `true`), so a test's timers
   * are only those it made itself. Set to `false` to make them save readings as they do with
   * the system clock (an open breaker then waits on a wake-up timer), to test those paths.
   */
  cheapNow = true;

  /**
   * @param start the initial reading in ms (default 0).
   * @throws {OptionsError} when `start` is not a finite number.
   */
  constructor(start = 0) {
    if (typeof start !== 'number' || !Number.isFinite(start)) {
      throw new OptionsError('start', start, 'a finite number of ms');
    }
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /**
   * Calls `callback` once the clock reaches `ms` from now; a negative `ms` is due at once, as
   * with `setTimeout`. Throws {@link OptionsError} when `ms` is not a number or NaN: such a
   * timer would make the clock read NaN once it fired.
   */
  setTimer(callback: () => void, ms: number): TimerHandle {
    if (typeof ms !== 'number' || Number.isNaN(ms)) {
      throw new OptionsError('ms', ms, 'a number of ms');
    }
    const timer = new ManualTimer(this.#now + Math.max(0, ms), this.#seq++, callback);
    this.#timers.push(timer);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    if (handle instanceof ManualTimer) {
      handle.cancelled = true;
      const i = this.#timers.indexOf(handle);
      if (i >= 0) this.#timers.splice(i, 1);
    }
  }

  /** Number of timers scheduled and not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due, in order. Throws
   * {@link OptionsError} (and moves nothing) unless `ms` is a finite number >= 0: time never
   * goes backwards, and a NaN reading would stall every policy for good.
   */
  advance(ms: number): void {
    const target = this.#now + forward(ms);
    for (let timer = this.#nextDue(target); timer; timer = this.#nextDue(target)) {
      this.#now = timer.due;
      timer.callback();
    }
    this.#now = target;
  }

  /**
   * Like {@link advance}, but lets promise continuations run after each timer fires, so
   * chains of async work scheduled by timers (a retry after its delay, say) progress as they
   * would in real time. Also drains pending continuations before returning. Rejects with
   * {@link OptionsError} for the `ms` that {@link advance} refuses.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#now + forward(ms);
    await flushMicrotasks();
    for (let timer = this.#nextDue(target); timer; timer = this.#nextDue(target)) {
      this.#now = timer.due;
      timer.callback();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  /**
   * Fires timers until none is left, advancing time to each and letting promise continuations
   * run after each. Stops once `limit` timers fired (default 10,000; an integer or Infinity):
   * it then resolves if no timer is left and rejects if one is (a timer re-arming itself, most
   * likely). Rejects with {@link OptionsError} for a `limit` that is not an integer >= 0.
   */
  async runAll(limit = 10_000): Promise<void> {
    integer(limit, 'limit', 0, 0, Number.POSITIVE_INFINITY);
    for (let n = 0; n < limit; n++) {
      await flushMicrotasks();
      const next = this.#nextDue(Number.POSITIVE_INFINITY);
      if (!next) return;
      this.#now = next.due;
      next.callback();
    }
    await flushMicrotasks();
    if (this.#timers.length === 0) return;
    throw new Error(
      `ManualClock.runAll: ${limit} timers fired and more are due; is a timer re-arming itself?`,
    );
  }

  #nextDue(limit: number): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    let index = -1;
    const timers = this.#timers;
    for (let i = 0; i < timers.length; i++) {
      const t = timers[i]!;
      if (t.due > limit) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.seq < best.seq)) {
        best = t;
        index = i;
      }
    }
    if (best) timers.splice(index, 1);
    return best;
  }
}

/** `ms` when it is a finite number >= 0, else an OptionsError. */
function forward(ms: number): number {
  if (typeof ms === 'number' && ms >= 0 && ms !== Number.POSITIVE_INFINITY) return ms;
  throw new OptionsError('ms', ms, 'a finite number of ms >= 0 (a ManualClock only moves forward)');
}

/** Resolves after the current chain of promise continuations has run. */
export function flushMicrotasks(rounds = 20): Promise<void> {
  let p = Promise.resolve();
  for (let i = 0; i < rounds; i++) p = p.then(() => {});
  return p;
}
