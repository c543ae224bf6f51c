import type { Clock, TimerHandle } from '../clock/Clock.js';

/** @internal An entry of a {@link DeadlineFifo}: its deadline, and whether it has settled. */
export interface DeadlineEntry {
  readonly deadline: number;
  done: boolean;
}

/**
 * A timer that fires this much later than asked means the event loop was blocked; replies
 * that arrived meanwhile are still unread, so expiry waits one more turn for them.
 */
const LATE_MS = 2;

/**
 * @internal Deadlines of one fixed duration in arrival order, served by ONE timer armed for the
 * oldest live entry: with equal durations deadlines never decrease along the queue, so no
 * decision needs a timer of its own.
 *
 * Settled entries stay in the array until the timer passes them or nothing is live any more
 * (then the array is emptied at once). The timer keeps the process alive only while some entry
 * is live: an awaited decision still times out in a script with nothing else pending, and an
 * idle store never delays exit.
 */
export class DeadlineFifo<T extends DeadlineEntry> {
  private items: (T | undefined)[] = [];
  private head = 0;
  private live = 0;
  private timer: TimerHandle | undefined;
  private due = 0;
  private keepingAlive = false;
  private waitedForIo = false;

  constructor(
    private readonly clock: Clock,
    private readonly expire: (entry: T) => void,
  ) {}

  /** Entries not yet settled. */
  get size(): number {
    return this.live;
  }

  /** True while the timer is armed. */
  get armed(): boolean {
    return this.timer !== undefined;
  }

  add(entry: T): void {
    this.items.push(entry);
    this.live++;
    if (this.timer === undefined) {
      this.arm(Math.max(0, entry.deadline - this.clock.now()));
    } else if (!this.keepingAlive) {
      this.keepingAlive = true;
      this.clock.setKeepAlive?.(this.timer, true);
    }
  }

  /** Marks `entry` settled by its owner (before its deadline). */
  settle(entry: T): void {
    entry.done = true;
    if (--this.live > 0) return;
    // Nothing live: every held entry is settled, so all can go at once.
    this.items.length = 0;
    this.head = 0;
    if (this.keepingAlive) {
      this.keepingAlive = false;
      this.clock.setKeepAlive?.(this.timer, false);
    }
  }

  /** Cancels the timer and returns the live entries (oldest first), forgetting them all. */
  drain(): T[] {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.keepingAlive = false;
    const live: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const entry = this.items[i]!;
      if (!entry.done) {
        entry.done = true;
        live.push(entry);
      }
    }
    this.items = [];
    this.head = 0;
    this.live = 0;
    return live;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.keepingAlive = false;
    const now = this.clock.now();
    if (this.live > 0 && !this.waitedForIo && now - this.due > LATE_MS) {
      // A timer due in 0 ms runs in the next timers phase, after the I/O poll phase.
      this.waitedForIo = true;
      this.arm(0);
      return;
    }
    this.waitedForIo = false;
    const items = this.items;
    while (this.head < items.length) {
      const entry = items[this.head]!;
      if (!entry.done) {
        if (entry.deadline > now) {
          this.arm(entry.deadline - now);
          this.compact();
          return;
        }
        entry.done = true;
        this.live--;
        this.expire(entry);
      }
      items[this.head++] = undefined;
    }
    this.items.length = 0;
    this.head = 0;
  };

  private arm(ms: number): void {
    this.due = this.clock.now() + ms;
    this.timer = this.clock.setTimer(this.fire, ms, true);
    this.keepingAlive = true;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
