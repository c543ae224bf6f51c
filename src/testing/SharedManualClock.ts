import type { Clock, TimerHandle } from '../clock/Clock.js';
import { ManualClock } from '../clock/ManualClock.js';
import { OptionsError } from '../errors/OptionsError.js';

/** What a thread builds a {@link SharedManualClock} from: post it or pass it as `workerData`. */
export interface SharedManualClockState {
  readonly kind: 'manualClock';
  /**
   * One BigInt64 word: the reading in whole µs. A worker may `Atomics.wait` on it for the time
   * to move: {@link SharedManualClock.advance} notifies its waiters.
   */
  readonly buffer: SharedArrayBuffer;
}

/**
 * A {@link ManualClock} whose reading lives in a `SharedArrayBuffer`, for tests of policies
 * shared between worker threads: every thread's clock built from one `state` reads the same
 * time, and any of them moves it. Readings are whole microseconds. Timers are each thread's
 * own: they fire when that thread moves the clock or calls {@link fireDue}.
 *
 * @example
 * ```ts
 * const clock = new SharedManualClock();            // main thread
 * new Worker(url, { workerData: { clock: clock.state } });
 * const there = new SharedManualClock(workerData.clock); // in the worker
 * clock.advance(1_000);                              // both read 1000
 * ```
 */
export class SharedManualClock implements Clock {
  /** What another thread builds its clock from. */
  readonly state: SharedManualClockState;
  /** Policies read this clock whenever they need the time. */
  readonly cheapNow = true;
  readonly #us: BigInt64Array;
  readonly #timers: ManualClock;

  /**
   * @param start the initial reading in ms (default 0), to make a new shared clock; or the
   * `state` of one, to read the same time.
   * @throws {OptionsError} when `start` is neither a finite number nor such a state.
   */
  constructor(start: number | SharedManualClockState = 0) {
    if (typeof start === 'number') {
      if (!Number.isFinite(start)) throw new OptionsError('start', start, 'a finite number of ms');
      const buffer = new SharedArrayBuffer(8);
      this.state = Object.freeze({ kind: 'manualClock', buffer });
      this.#us = new BigInt64Array(buffer);
      Atomics.store(this.#us, 0, BigInt(Math.round(start * 1_000)));
    } else {
      const s = start as Partial<SharedManualClockState> | null;
      if (
        typeof s !== 'object' ||
        s === null ||
        s.kind !== 'manualClock' ||
        !(s.buffer instanceof SharedArrayBuffer) ||
        s.buffer.byteLength < 8
      ) {
        throw new OptionsError('start', start, 'a number of ms or a SharedManualClock `state`');
      }
      this.state = start;
      this.#us = new BigInt64Array(s.buffer, 0, 1);
    }
    this.#timers = new ManualClock(this.now());
  }

  now(): number {
    return Number(Atomics.load(this.#us, 0)) / 1_000;
  }

  /**
   * Moves the time of every thread forward by `ms` (rounded to whole µs) and fires this
   * thread's timers that fall due. Throws {@link OptionsError} unless `ms` is a finite number
   * >= 0.
   */
  advance(ms: number): void {
    if (!(typeof ms === 'number' && ms >= 0 && ms !== Number.POSITIVE_INFINITY)) {
      throw new OptionsError('ms', ms, 'a finite number of ms >= 0 (the clock only moves forward)');
    }
    Atomics.add(this.#us, 0, BigInt(Math.round(ms * 1_000)));
    Atomics.notify(this.#us, 0);
    this.fireDue();
  }

  /** Fires this thread's timers due by the shared time (another thread may have moved it). */
  fireDue(): void {
    this.#timers.advance(Math.max(0, this.now() - this.#timers.now()));
  }

  setTimer(callback: () => void, ms: number): TimerHandle {
    this.fireDue();
    return this.#timers.setTimer(callback, ms);
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers.clearTimer(handle);
  }
}
