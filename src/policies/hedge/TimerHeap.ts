import type { Clock, TimerHandle } from '../../clock/Clock.js';
import { grown } from '../shared/grown.js';

/**
 * @internal Timers of varying delays on ONE armed timer: a binary min-heap of deadlines in
 * typed arrays, the timer armed for the earliest. Entries are not removed when their waiter
 * stops waiting: `release` counts them dead, they are dropped when they reach the top, and the
 * heap is rebuilt without them when they outnumber the live ones, so it never holds more than
 * about twice the waiters. Its timer never keeps the process alive. Stamps are negative, so
 * they never equal those of a {@link DeadlineQueue} beside it.
 */
export class TimerHeap<T> {
  private deadlines = new Float64Array(16);
  private stamps = new Float64Array(16);
  private targets: (T | undefined)[] = new Array(16);
  private size = 0;
  private dead = 0;
  private nextStamp = -1;
  private timer: TimerHandle | undefined = undefined;
  /** When the armed timer is due. */
  private armedFor = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    private readonly isLive: (target: T, stamp: number) => boolean,
    private readonly expire: (target: T, stamp: number) => void,
  ) {}

  /** Entries held, dead ones included. */
  get length(): number {
    return this.size;
  }

  /** Adds a waiter due `delay` ms from now; returns its stamp. */
  add(target: T, delay: number): number {
    const now = this.clock.now();
    const deadline = now + delay;
    if (this.size === this.targets.length) this.grow();
    const stamp = this.nextStamp--;
    this.put(this.size++, deadline, stamp, target);
    this.up(this.size - 1);
    if (deadline < this.armedFor) this.arm(deadline, now);
    return stamp;
  }

  /** The waiter stamped `stamp` stopped waiting. */
  release(_stamp: number): void {
    this.dead++;
    if (this.size > 32 && this.dead * 2 > this.size) this.compact();
  }

  /** Cancels the timer and forgets every entry. */
  clear(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.targets.fill(undefined);
    this.size = 0;
    this.dead = 0;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    while (this.size > 0 && this.deadlines[0]! <= now) {
      const target = this.targets[0]!;
      const stamp = this.stamps[0]!;
      this.pop();
      if (this.isLive(target, stamp)) this.expire(target, stamp);
      else if (this.dead > 0) this.dead--;
    }
    // `expire` may have added entries, arming the timer already.
    if (this.size > 0 && this.deadlines[0]! < this.armedFor) this.arm(this.deadlines[0]!, now);
  };

  private arm(deadline: number, now: number): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.armedFor = deadline;
    this.timer = this.clock.setTimer(this.fire, Math.max(0, deadline - now), false);
  }

  private pop(): void {
    const last = --this.size;
    if (last > 0) this.put(0, this.deadlines[last]!, this.stamps[last]!, this.targets[last]);
    this.targets[last] = undefined;
    if (last > 0) this.down(0);
  }

  /** Drops the dead entries and restores the heap order. */
  private compact(): void {
    let n = 0;
    for (let i = 0; i < this.size; i++) {
      const target = this.targets[i]!;
      const stamp = this.stamps[i]!;
      if (this.isLive(target, stamp)) this.put(n++, this.deadlines[i]!, stamp, target);
    }
    this.targets.fill(undefined, n, this.size);
    this.size = n;
    this.dead = 0;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private put(i: number, deadline: number, stamp: number, target: T | undefined): void {
    this.deadlines[i] = deadline;
    this.stamps[i] = stamp;
    this.targets[i] = target;
  }

  private swap(i: number, j: number): void {
    const d = this.deadlines[i]!;
    const s = this.stamps[i]!;
    const t = this.targets[i];
    this.put(i, this.deadlines[j]!, this.stamps[j]!, this.targets[j]);
    this.put(j, d, s, t);
  }

  /** Earlier deadline first; equal deadlines in the order they were added (stamps decrease). */
  private before(i: number, j: number): boolean {
    const a = this.deadlines[i]!;
    const b = this.deadlines[j]!;
    return a < b || (a === b && this.stamps[i]! > this.stamps[j]!);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) return;
      const r = l + 1;
      const c = r < this.size && this.before(r, l) ? r : l;
      if (!this.before(c, i)) return;
      this.swap(i, c);
      i = c;
    }
  }

  private grow(): void {
    const n = this.targets.length * 2;
    this.deadlines = grown(this.deadlines, n);
    this.stamps = grown(this.stamps, n);
    this.targets.length = n;
  }
}
