import type { Clock, TimerHandle } from './Clock.js';

/** @internal Something woken at a time it asked for. */
export interface Sleeper {
  wake(): void;
}

/** A sleeper held strongly, or weakly: one the heap must not keep alive. */
type Entry = Sleeper | WeakRef<Sleeper>;

/** Heap size below which dead weak entries are left for their time to come. */
const MIN_COMPACT = 1024;

const quiet = new WeakMap<Clock, Wakeups>();
const keepingAlive = new WeakMap<Clock, Wakeups>();

/**
 * @internal Wakes any number of sleepers at their own times with ONE timer per clock: a
 * min-heap of times, the timer armed for the earliest. Open circuit breakers use it to learn
 * that their break may be over without reading the clock on every refused call, and without a
 * timer each (their timer never keeps the process alive); keyed rate limiters use another to
 * wake callers waiting for their turn (that one keeps it alive while anyone waits).
 *
 * Entries are never removed early: a sleeper checks, when woken, whether it still cares. A
 * sleeper scheduled through a `WeakRef` is not kept alive by the heap (a breaker made per
 * request and dropped once open is collected before its break ends); entries whose sleeper was
 * collected are dropped whenever the heap has doubled since they were last looked for, so they
 * cost a few bytes each, for a while.
 */
export class Wakeups {
  private times: number[] = [];
  private sleepers: Entry[] = [];
  private timer: TimerHandle | undefined = undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  /** Heap size at which dead weak entries are next looked for. */
  private compactAt = MIN_COMPACT;

  private constructor(
    private readonly clock: Clock,
    private readonly keepAlive: boolean,
  ) {}

  /** The instance serving `clock` whose timer keeps the process alive, or not. */
  static of(clock: Clock, keepAlive = false): Wakeups {
    const map = keepAlive ? keepingAlive : quiet;
    let w = map.get(clock);
    if (w === undefined) {
      w = new Wakeups(clock, keepAlive);
      map.set(clock, w);
    }
    return w;
  }

  /** Sleepers waiting, stale ones included; for tests. */
  get size(): number {
    return this.times.length;
  }

  /**
   * Wakes `sleeper` once the clock reads `at` or later; `now` is the time now. Given as a
   * `WeakRef`, the sleeper is not kept alive by this heap, and is not woken once collected.
   */
  schedule(at: number, now: number, sleeper: Entry): void {
    if (this.times.length >= this.compactAt) this.compact();
    const times = this.times;
    let i = times.length;
    times.push(at);
    this.sleepers.push(sleeper);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (times[parent]! <= at) break;
      this.move(parent, i);
      i = parent;
    }
    this.place(i, at, sleeper);
    if (at < this.armedFor) this.arm(at, now);
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    // A sleeper may schedule again from `wake`; the loop re-reads the heap each time.
    while (this.times.length > 0 && this.times[0]! <= now) {
      const sleeper = live(this.sleepers[0]!);
      this.pop();
      sleeper?.wake();
    }
    if (this.times.length > 0 && this.times[0]! < this.armedFor) this.arm(this.times[0]!, now);
  };

  private arm(at: number, now: number): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.armedFor = at;
    this.timer = this.clock.setTimer(this.fire, Math.max(0, at - now), this.keepAlive);
  }

  /** Drops the entries whose sleeper was collected and rebuilds the heap from the rest. */
  private compact(): void {
    const times = this.times;
    const sleepers = this.sleepers;
    let n = 0;
    for (let i = 0; i < times.length; i++) {
      const entry = sleepers[i]!;
      if (live(entry) === undefined) continue;
      times[n] = times[i]!;
      sleepers[n] = entry;
      n++;
    }
    times.length = n;
    sleepers.length = n;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.siftDown(i, times[i]!, sleepers[i]!, n);
    this.compactAt = Math.max(MIN_COMPACT, 2 * n);
  }

  private pop(): void {
    const times = this.times;
    const last = times.length - 1;
    const at = times[last]!;
    const sleeper = this.sleepers[last]!;
    times.pop();
    this.sleepers.pop();
    if (last === 0) return;
    this.siftDown(0, at, sleeper, last);
  }

  /** Places (`at`, `sleeper`) at `i` or below it, in a heap of `size` entries. */
  private siftDown(i: number, at: number, sleeper: Entry, size: number): void {
    const times = this.times;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const r = l + 1;
      const child = r < size && times[r]! < times[l]! ? r : l;
      if (times[child]! >= at) break;
      this.move(child, i);
      i = child;
    }
    this.place(i, at, sleeper);
  }

  private move(from: number, to: number): void {
    this.times[to] = this.times[from]!;
    this.sleepers[to] = this.sleepers[from]!;
  }

  private place(i: number, at: number, sleeper: Entry): void {
    this.times[i] = at;
    this.sleepers[i] = sleeper;
  }
}

/** The sleeper of an entry, or undefined when it was held weakly and has been collected. */
function live(entry: Entry): Sleeper | undefined {
  return 'deref' in entry ? entry.deref() : entry;
}
