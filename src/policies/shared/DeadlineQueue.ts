import type { Clock, TimerHandle } from '../../clock/Clock.js';
import { NO_TIME } from '../../protocol/step.js';

/**
 * @internal Deadlines of one fixed duration, in arrival order. Because every entry waits the
 * same time (`ms`, which may be Infinity for a plain FIFO), deadlines are non-decreasing in
 * insertion order, so a FIFO plus ONE timer armed for the head serves any number of waiters:
 * no timer per call.
 *
 * Entries are not removed when their waiter finishes early; the owner changes the waiter's
 * stamp instead, and dead entries are dropped when they reach the head (`prune`) or when the
 * timer fires. The timer stays armed when the queue empties (re-arming per call would cost a
 * timer per call), but it keeps the process alive only while some entry is held: an awaited
 * call can time out in a script with nothing else pending, and an idle queue never delays
 * exit.
 *
 * Coarse mode saves the clock reading per entry (about 50 ns on the system clock): an entry
 * added without a reading is stamped with the reading of the next timer firing, and while
 * entries are held the timer fires at least every `tick()` ms. A deadline is then never early
 * and at most one tick late. A timer that ticks every {@link LINGER_MS} or sooner stays
 * referenced until a firing finds the queue empty, so an idle queue delays exit by at most that,
 * and calls made one at a time cost no ref and unref of the timer each. A longer tick (a timeout
 * of 10 minutes ticks every 18.75 s) lets go of the process as soon as the queue empties, as in
 * fine mode: a script must exit as soon as its last call is done.
 */
/** The longest an emptied coarse queue's timer may keep the process alive: one tick of it. */
const LINGER_MS = 50;

export class DeadlineQueue<T> {
  private targets: (T | undefined)[] = new Array(16);
  private stamps = new Float64Array(16);
  private deadlines = new Float64Array(16);
  private tags = new Int32Array(16);
  private head = 0;
  private count = 0;
  private nextStamp = 1;
  private timer: TimerHandle | undefined;
  private keepingAlive = false;
  /** Coarse, with a tick of at most {@link LINGER_MS}: the timer keeps its hold until it fires. */
  private lingers: boolean;
  /** The last `unstamped` entries have no deadline yet (coarse mode). */
  private unstamped = 0;
  /** When each entry was added, kept only after {@link keepArrivals}. */
  private arrivals: Float64Array | undefined = undefined;

  constructor(
    private readonly clock: Clock,
    private ms: number,
    private readonly isLive: (target: T, stamp: number, tag: number) => boolean,
    private readonly expire: (target: T, stamp: number, tag: number) => void,
    private readonly coarse = false,
    /** False for a queue whose timer never keeps the process alive (hedge delays). */
    private readonly holdsProcess = true,
  ) {
    this.lingers = coarse && this.tick() <= LINGER_MS;
  }

  /** The longest a coarse queue lets an entry go without a deadline: ms / 32, at least 1 ms. */
  tick(): number {
    return Math.max(1, this.ms / 32);
  }

  /** Entries held, dead ones included. */
  get size(): number {
    return this.count;
  }

  /** True while a timer is armed. */
  get armed(): boolean {
    return this.timer !== undefined;
  }

  /**
   * Adds a waiter whose deadline is `now + ms`; returns its stamp. In coarse mode `now` may be
   * `NO_TIME`: the entry is stamped at the next firing, or now if no timer is armed.
   */
  add(target: T, tag: number, now: number): number {
    if (this.count === this.targets.length) this.grow();
    const mask = this.targets.length - 1;
    const i = (this.head + this.count) & mask;
    const stamp = this.nextStamp++;
    this.targets[i] = target;
    this.stamps[i] = stamp;
    this.tags[i] = tag;
    this.count++;
    if (now === NO_TIME) {
      if (this.timer !== undefined) {
        this.deadlines[i] = Number.NaN;
        this.unstamped++;
        if (!this.keepingAlive) this.keepAlive(true);
        return stamp;
      }
      now = this.clock.now();
    }
    this.deadlines[i] = now + this.ms;
    if (this.timer === undefined) {
      if (this.ms !== Number.POSITIVE_INFINITY) this.arm(this.ms);
    } else if (!this.keepingAlive) {
      this.keepAlive(true);
    }
    return stamp;
  }

  /**
   * Adds a waiter due at `deadline` instead of `now + ms` (the queue's own wait is then
   * unused); a deadline before the last one held is moved to it, so the order holds and one
   * timer still serves all. `now` is the time now. Returns its stamp.
   */
  addAt(target: T, tag: number, deadline: number, now: number): number {
    if (this.count === this.targets.length) this.grow();
    const mask = this.targets.length - 1;
    if (this.count > 0) {
      const last = this.deadlines[(this.head + this.count - 1) & mask]!;
      if (deadline < last) deadline = last;
    }
    const i = (this.head + this.count) & mask;
    const stamp = this.nextStamp++;
    this.targets[i] = target;
    this.stamps[i] = stamp;
    this.tags[i] = tag;
    this.deadlines[i] = deadline;
    // A timer left armed by an empty queue may be due after this deadline.
    if (this.count === 0 && this.timer !== undefined) {
      this.clock.clearTimer(this.timer);
      this.timer = undefined;
    }
    this.count++;
    if (this.timer === undefined) this.arm(Math.max(0, deadline - now));
    else if (!this.keepingAlive) this.keepAlive(true);
    return stamp;
  }

  /** Gives the entries without a deadline the deadline `now + ms`. */
  private stampPending(now: number): void {
    if (this.unstamped === 0) return;
    const mask = this.targets.length - 1;
    const deadline = now + this.ms;
    for (let k = this.count - this.unstamped; k < this.count; k++) {
      this.deadlines[(this.head + k) & mask] = deadline;
    }
    this.unstamped = 0;
  }

  /**
   * The waiter stamped `stamp` is done. In the common case it is the head (calls finishing in
   * the order they started), dropped without asking `isLive`; then dead entries are pruned.
   */
  release(stamp: number): void {
    const h = this.head;
    if (this.count > 0 && this.stamps[h] === stamp) {
      this.targets[h] = undefined;
      this.head = (h + 1) & (this.targets.length - 1);
      this.count--;
      if (this.unstamped > this.count) this.unstamped = this.count;
    }
    this.prune();
  }

  /**
   * The deadline of the entry stamped `stamp`, or NaN when none is held. An entry still without
   * a deadline (coarse mode) gets one now, with every other such entry: `now + ms`, never early.
   * Stamps grow in insertion order, so the entry is found by bisection.
   */
  deadlineOf(stamp: number, now: number): number {
    const mask = this.targets.length - 1;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const i = (this.head + mid) & mask;
      const s = this.stamps[i]!;
      if (s < stamp) lo = mid + 1;
      else if (s > stamp) hi = mid - 1;
      else {
        if (Number.isNaN(this.deadlines[i]!)) this.stampPending(now);
        return this.deadlines[i]!;
      }
    }
    return Number.NaN;
  }

  /** Drops dead entries from the head, so a queue of finished calls does not grow. */
  prune(): void {
    const mask = this.targets.length - 1;
    while (this.count > 0) {
      const h = this.head;
      if (this.isLive(this.targets[h]!, this.stamps[h]!, this.tags[h]!)) return;
      this.targets[h] = undefined;
      this.head = (h + 1) & mask;
      this.count--;
      if (this.unstamped > this.count) this.unstamped = this.count;
    }
    if (this.keepingAlive) this.keepAlive(false);
  }

  /** Tag of the entry last returned by {@link takeFirstLive}. */
  takenTag = 0;

  /**
   * Removes and returns the oldest live entry (dead ones before it are dropped), or undefined.
   * Its tag is left in {@link takenTag}.
   */
  takeFirstLive(): T | undefined {
    const mask = this.targets.length - 1;
    while (this.count > 0) {
      const h = this.head;
      const target = this.targets[h]!;
      const live = this.isLive(target, this.stamps[h]!, this.tags[h]!);
      this.targets[h] = undefined;
      this.head = (h + 1) & mask;
      this.count--;
      if (this.unstamped > this.count) this.unstamped = this.count;
      if (live) {
        this.takenTag = this.tags[h]!;
        if (this.count === 0 && this.keepingAlive) this.keepAlive(false);
        return target;
      }
    }
    if (this.keepingAlive) this.keepAlive(false);
    return undefined;
  }

  /**
   * Removes and returns the newest live entry (dead ones after it are dropped), or undefined.
   * Its tag is left in {@link takenTag}. Deadlines stay in insertion order, so the timer armed
   * for the head still serves the rest.
   */
  takeLastLive(): T | undefined {
    const mask = this.targets.length - 1;
    while (this.count > 0) {
      const i = (this.head + this.count - 1) & mask;
      const target = this.targets[i]!;
      const live = this.isLive(target, this.stamps[i]!, this.tags[i]!);
      this.targets[i] = undefined;
      this.count--;
      // The entries without a deadline are the last ones.
      if (this.unstamped > 0) this.unstamped--;
      if (live) {
        this.takenTag = this.tags[i]!;
        if (this.count === 0 && this.keepingAlive) this.keepAlive(false);
        return target;
      }
    }
    if (this.keepingAlive) this.keepAlive(false);
    return undefined;
  }

  /**
   * Starts keeping arrival times: the entries held now count as arrived at `now`; the owner
   * gives each entry it adds from now on its time with {@link noteArrival} (so `add`, on the
   * timeout's per-call path, does not pay for it).
   */
  keepArrivals(now: number): void {
    if (this.arrivals === undefined) this.arrivals = new Float64Array(this.targets.length);
    const mask = this.targets.length - 1;
    for (let k = 0; k < this.count; k++) this.arrivals[(this.head + k) & mask] = now;
  }

  /** The entry added last arrived at `now` (not before the arrival of any entry held). */
  noteArrival(now: number): void {
    this.arrivals![(this.head + this.count - 1) & (this.targets.length - 1)] = now;
  }

  /**
   * Removes the entries added before `cutoff` (they are at the head: arrivals are in insertion
   * order) and calls `drop` with each live one. Needs {@link keepArrivals}.
   */
  dropArrivedBefore(cutoff: number, drop: (target: T, stamp: number, tag: number) => void): void {
    while (this.count > 0) {
      // drop may run user code that adds entries (and grows the ring): re-read it each time.
      const h = this.head;
      if (this.arrivals![h]! >= cutoff) return;
      const target = this.targets[h]!;
      const stamp = this.stamps[h]!;
      const tag = this.tags[h]!;
      const live = this.isLive(target, stamp, tag);
      this.targets[h] = undefined;
      this.head = (h + 1) & (this.targets.length - 1);
      this.count--;
      if (this.unstamped > this.count) this.unstamped = this.count;
      if (this.count === 0 && this.keepingAlive) this.keepAlive(false);
      if (live) drop(target, stamp, tag);
    }
  }

  /**
   * Drops every dead entry, wherever it is, keeping the order of the others. Entries served
   * from the tail (LIFO) can leave dead ones below live ones that the head never reaches;
   * the owner calls this when dead entries outnumber live ones, so memory stays bounded.
   */
  compact(): void {
    const mask = this.targets.length - 1;
    const firstUnstamped = this.count - this.unstamped;
    let kept = 0;
    let unstamped = 0;
    for (let k = 0; k < this.count; k++) {
      const i = (this.head + k) & mask;
      if (!this.isLive(this.targets[i]!, this.stamps[i]!, this.tags[i]!)) continue;
      const j = (this.head + kept) & mask;
      if (j !== i) {
        this.targets[j] = this.targets[i];
        this.stamps[j] = this.stamps[i]!;
        this.deadlines[j] = this.deadlines[i]!;
        this.tags[j] = this.tags[i]!;
        if (this.arrivals !== undefined) this.arrivals[j] = this.arrivals[i]!;
      }
      if (k >= firstUnstamped) unstamped++;
      kept++;
    }
    for (let k = kept; k < this.count; k++) this.targets[(this.head + k) & mask] = undefined;
    this.count = kept;
    this.unstamped = unstamped;
    if (kept === 0 && this.keepingAlive) this.keepAlive(false);
  }

  /**
   * Changes the wait of the entries added from now on. A shorter wait also shortens the waits
   * already held to end at most `ms` after `now`, so deadlines stay in insertion order and one
   * timer still serves them all; a longer one leaves them as they are.
   */
  setDuration(ms: number, now: number): void {
    this.stampPending(now);
    const shorter = ms < this.ms;
    this.ms = ms;
    this.lingers = this.coarse && this.tick() <= LINGER_MS;
    if (!shorter) return;
    const limit = now + ms;
    const mask = this.targets.length - 1;
    for (let k = 0; k < this.count; k++) {
      const i = (this.head + k) & mask;
      if (this.deadlines[i]! > limit) this.deadlines[i] = limit;
    }
    // The armed timer may be due after the earliest deadline now.
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.keepingAlive = false;
    if (this.count > 0) this.arm(Math.max(0, this.deadlines[this.head]! - now));
  }

  /** Makes the stamps of this queue follow those of `previous`, so no stamp is given twice. */
  continueStamps(previous: DeadlineQueue<T>): void {
    this.nextStamp = previous.nextStamp;
  }

  /** Cancels the timer and forgets every entry without expiring them. */
  clear(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.keepingAlive = false;
    this.targets.fill(undefined);
    this.head = 0;
    this.count = 0;
    this.unstamped = 0;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.keepingAlive = false;
    const now = this.clock.now();
    this.stampPending(now);
    while (this.count > 0) {
      const mask = this.targets.length - 1;
      const h = this.head;
      const target = this.targets[h]!;
      const stamp = this.stamps[h]!;
      const tag = this.tags[h]!;
      const live = this.isLive(target, stamp, tag);
      if (live && this.deadlines[h]! > now) {
        // An entry added from inside `expire` may have armed a timer for its own, later
        // deadline; the head's comes first.
        if (this.timer !== undefined) this.clock.clearTimer(this.timer);
        this.timer = undefined;
        // After a change to an unlimited wait, the entries from the head on never expire.
        if (this.deadlines[h]! !== Number.POSITIVE_INFINITY) this.arm(this.deadlines[h]! - now);
        return;
      }
      this.targets[h] = undefined;
      this.head = (h + 1) & mask;
      this.count--;
      // expire may run user code that adds entries; the loop re-reads the ring each time.
      if (live) this.expire(target, stamp, tag);
    }
  };

  private arm(ms: number): void {
    const hold = this.holdsProcess;
    this.timer = this.clock.setTimer(this.fire, this.coarse ? Math.min(ms, this.tick()) : ms, hold);
    this.keepingAlive = hold;
  }

  private keepAlive(on: boolean): void {
    if (!this.holdsProcess || (!on && this.lingers)) return;
    this.keepingAlive = on;
    this.clock.setKeepAlive?.(this.timer, on);
  }

  private grow(): void {
    const n = this.targets.length;
    const targets: (T | undefined)[] = new Array(n * 2);
    const stamps = new Float64Array(n * 2);
    const deadlines = new Float64Array(n * 2);
    const tags = new Int32Array(n * 2);
    const arrivals = this.arrivals === undefined ? undefined : new Float64Array(n * 2);
    for (let k = 0; k < this.count; k++) {
      const i = (this.head + k) & (n - 1);
      targets[k] = this.targets[i];
      stamps[k] = this.stamps[i]!;
      deadlines[k] = this.deadlines[i]!;
      tags[k] = this.tags[i]!;
      if (arrivals !== undefined) arrivals[k] = this.arrivals![i]!;
    }
    this.arrivals = arrivals;
    this.targets = targets;
    this.stamps = stamps;
    this.deadlines = deadlines;
    this.tags = tags;
    this.head = 0;
  }
}
