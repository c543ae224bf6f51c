import type { Clock } from '../../clock/Clock.js';
import { CoarseTime } from '../../clock/CoarseTime.js';
import { type Sleeper, Wakeups } from '../../clock/Wakeups.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { OptionsError, UsageError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { integer, keyError } from '../../validation/validate.js';
import { grown } from '../shared/grown.js';
import { gcraDecision, type RateLimitDecision } from './decision.js';
import { RateLimitedError, refusalAt } from './errors.js';
import type { RateLimitedEvent } from './events.js';
import { gcraTake, gcraWait } from './gcra.js';
import {
  type RateLimiterOptions,
  type ResolvedRateLimiterOptions,
  resolveRateLimiterOptions,
} from './options.js';
import type { AcquireOptions } from './RateLimiter.js';
import { ReservedTurn } from './ReservedTurn.js';

/** Options of {@link KeyedRateLimiter}: the rate of each key, and how many keys to hold. */
export interface KeyedRateLimiterOptions extends RateLimiterOptions {
  /**
   * Keys held at most, in [1, 2^31-1]. Past it a key is forgotten to make room (an idle one if
   * the search meets one, else one not used lately), which resets its limit: size it above the
   * number of keys active at once. @default 100000
   */
  readonly maxKeys?: number;
}

/** Defaults of {@link KeyedRateLimiterOptions} beyond those of the rate limiter. */
export const keyedRateLimiterDefaults = Object.freeze({ maxKeys: 100_000 });

/** Calls between two moves of the hand that drops idle keys. */
const SWEEP_EVERY = 16;
/**
 * How long a key stays after its limit is back to idle, in µs: dropping a key the moment it is
 * idle would make a key used every few ms be dropped and added again all the time.
 */
const IDLE_GRACE_US = 1_000_000;
/** Keys looked at per sweep, at most. */
const SWEEP_SIZE = 4;

const RESOLVED: Promise<void> = Promise.resolve();

/** A caller waiting for its reserved turn on one key. */
class KeyWaiter extends ReservedTurn implements Sleeper {
  constructor(
    private readonly limiter: KeyedRateLimiter,
    private readonly owner: Set<KeyWaiter>,
    resolve: () => void,
    reject: (reason: unknown) => void,
    signal: AbortSignal | undefined,
    readonly key: string,
    reservedTat: number,
    permits: number,
  ) {
    super(resolve, reject, signal, reservedTat, permits);
  }

  wake(): void {
    if (this.done) return;
    this.finish();
    this.resolve();
  }

  fail(reason: unknown): void {
    if (this.done) return;
    this.finish();
    this.reject(reason);
  }

  protected giveBack(): void {
    this.limiter.giveBack(this);
  }

  protected override finish(): void {
    super.finish();
    this.owner.delete(this);
  }
}

/**
 * One GCRA rate limit per key (per user, per API key, per tenant), each key holding one number.
 * A key whose limit has been back to idle for a second holds nothing worth keeping and is
 * dropped as calls go by (no timer per key); at most `maxKeys` are held, an approximation of
 * the least recently used going first.
 *
 * @example
 * ```ts
 * const perUser = new KeyedRateLimiter({ limit: 10, period: 1_000, maxKeys: 50_000 });
 * const wait = perUser.tryAcquire(userId);
 * if (wait > 0) return reply.status(429).header('Retry-After', Math.ceil(wait / 1000));
 * ```
 */
export class KeyedRateLimiter {
  readonly name: string;
  /** The clock this limiter reads. */
  readonly clock: Clock;
  /** Keys held at most. */
  readonly maxKeys: number;
  private readonly o: ResolvedRateLimiterOptions;
  private readonly coarse: CoarseTime | undefined;
  private readonly slots: KeySlots;
  private calls = 0;
  private error: RateLimitedError;
  private waiters: Set<KeyWaiter> | undefined = undefined;
  /** @internal */ readonly limited = new Listeners<RateLimitedEvent>();

  constructor(options: KeyedRateLimiterOptions) {
    const o = resolveRateLimiterOptions(options, ['maxKeys']);
    this.o = o;
    this.name = o.name;
    this.clock = o.clock;
    this.maxKeys = integer(
      options.maxKeys,
      'maxKeys',
      keyedRateLimiterDefaults.maxKeys,
      1,
      2_147_483_647,
    );
    this.coarse = o.clock.cheapNow === true ? undefined : CoarseTime.of(o.clock);
    this.slots = new KeySlots(this.maxKeys);
    this.error = stackless(() => new RateLimitedError(o.name, o.clock, 0));
  }

  /** Keys held now. */
  get size(): number {
    return this.slots.size;
  }

  /**
   * Takes `permits` (default 1) for `key` if they are free now: 0 when taken, otherwise the ms
   * until they would be (nothing taken). Throws {@link OptionsError} when `key` is not a
   * string of at most 1,024 characters or `permits` is not an integer in [1, burst].
   */
  tryAcquire(key: string, permits = 1): number {
    checkKey(key);
    if (permits !== 1) this.checkPermits(permits);
    const nowUs = this.nowUs();
    const wait = this.take(key, nowUs, permits);
    if (wait <= 0) return 0;
    this.refused(key, nowUs, wait, permits);
    return wait / 1_000;
  }

  /**
   * {@link tryAcquire} with the state it leaves for `key`, for `RateLimit` headers: takes
   * `permits` (default 1) if they are free now, with the same checks, errors and events, and
   * reports the permits remaining, the exact wait when refused and the time until the key's
   * whole burst is free again (see {@link RateLimitDecision}).
   *
   * @example
   * ```ts
   * const d = perUser.decide(userId);
   * if (!d.allowed) return reply.status(429).header('Retry-After', Math.ceil(d.retryAfterMs / 1000));
   * ```
   */
  decide(key: string, permits = 1): RateLimitDecision {
    checkKey(key);
    if (permits !== 1) this.checkPermits(permits);
    const nowUs = this.nowUs();
    const wait = this.take(key, nowUs, permits);
    if (wait > 0) this.refused(key, nowUs, wait, permits);
    const tat = this.slots.tats[this.slots.slotOf(key)!]!;
    return gcraDecision(wait / 1_000, tat - nowUs, this.o.intervalUs, this.o.burst, false);
  }

  /**
   * Takes `permits` for `key`, waiting up to `maxWait` ms (default: the limiter's `maxWait`)
   * with the turn reserved; rejects with {@link RateLimitedError} (nothing taken) when the
   * wait would be longer, and with the signal's reason when `signal` aborts (the reservation
   * is given back when no later one on the key depends on it), as {@link RateLimiter.acquire}
   * does.
   */
  acquire(key: string, permits = 1, options?: AcquireOptions): Promise<void> {
    checkKey(key);
    if (permits !== 1) this.checkPermits(permits);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const maxWait = options?.maxWait ?? this.o.maxWait;
    const nowUs = this.nowUs();
    const wait = this.take(key, nowUs, permits);
    if (wait <= 0) return RESOLVED;
    if (!(wait <= maxWait * 1_000)) {
      return Promise.reject(this.refused(key, nowUs, wait, permits));
    }
    const slots = this.slots;
    const slot = slots.find(key);
    const reservedTat = gcraTake(slots.tats[slot]!, nowUs, permits, this.o.intervalUs);
    slots.tats[slot] = reservedTat;
    const waiters = (this.waiters ??= new Set());
    return new Promise<void>((resolve, reject) => {
      const waiter = new KeyWaiter(
        this,
        waiters,
        resolve,
        reject,
        signal,
        key,
        reservedTat,
        permits,
      );
      signal?.addEventListener('abort', waiter);
      waiters.add(waiter);
      // An aborted waiter stays in the heap, ignored, until its time comes.
      Wakeups.of(this.clock, true).schedule((nowUs + wait) / 1_000, nowUs / 1_000, waiter);
    });
  }

  /** @internal A waiter left: its permits go back when no later reservation depends on them. */
  giveBack(waiter: KeyWaiter): void {
    const slots = this.slots;
    const slot = slots.slotOf(waiter.key);
    if (slot !== undefined && slots.tats[slot] === waiter.reservedTat) {
      slots.tats[slot] = waiter.reservedTat - waiter.permits * this.o.intervalUs;
    }
  }

  /** Forgets `key`: its next call starts from idle. */
  delete(key: string): boolean {
    return this.slots.delete(key);
  }

  /** Calls `listener` when the limiter refuses permits for a key. */
  onRejected(listener: (event: RateLimitedEvent) => void): Disposer {
    return this.limited.add(listener);
  }

  /** Forgets every key, refuses waiting callers with {@link UsageError}, removes listeners. */
  dispose(): void {
    this.slots.clear();
    if (this.waiters !== undefined) {
      const error = new UsageError(`Rate limiter "${this.name}" was disposed`);
      for (const w of this.waiters) w.fail(error);
      this.waiters = undefined;
    }
    this.limited.clear();
  }

  private nowUs(): number {
    return Math.round((this.coarse !== undefined ? this.coarse.now() : this.clock.now()) * 1_000);
  }

  /** 0 (or less) when `permits` were taken for `key` at `nowUs`, else the µs to wait. */
  private take(key: string, nowUs: number, permits: number): number {
    const { intervalUs, burst } = this.o;
    const slots = this.slots;
    if ((++this.calls & (SWEEP_EVERY - 1)) === 0) slots.sweep(nowUs - IDLE_GRACE_US, SWEEP_SIZE);
    const slot = slots.find(key, nowUs);
    const tat = slots.tats[slot]!;
    const wait = gcraWait(tat, nowUs, permits, intervalUs, burst);
    if (wait <= 0) slots.tats[slot] = gcraTake(tat, nowUs, permits, intervalUs);
    return wait;
  }

  private refused(key: string, nowUs: number, waitUs: number, permits: number): RateLimitedError {
    const freeAt = (nowUs + waitUs) / 1_000;
    const error = refusalAt(this.error, this.name, this.clock, freeAt, this.o.debug);
    this.error = error;
    if (this.limited.size !== 0) {
      this.limited.emit({ permits, retryAfter: waitUs / 1_000, key });
    }
    return error;
  }

  private checkPermits(permits: number): void {
    if (!Number.isInteger(permits) || permits < 1 || permits > this.o.burst) {
      throw new OptionsError('permits', permits, `an integer in [1, ${this.o.burst}] (the burst)`);
    }
  }
}

/** Keys come from traffic: anything but a short string would be held, and printed, as it is. */
function checkKey(key: unknown): void {
  const error = keyError(key);
  if (error !== undefined) throw error;
}

/**
 * @internal The keys of a keyed limiter and their TATs: a map from key to slot, and the TATs
 * in a typed array. At most `max` keys: past it one is dropped by the CLOCK algorithm (an
 * approximation of least recently used: a hand goes round the slots, sparing once each key
 * used again since it last passed). The same hand drops keys back to idle a few at a time as calls
 * go by, so no timer is needed.
 */
class KeySlots {
  private readonly index = new Map<string, number>();
  private keys: (string | undefined)[] = [];
  tats = new Float64Array(16);
  private used = new Uint8Array(16);
  private free: number[] = [];
  private hand = 0;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.index.size;
  }

  /** The slot of `key`, made (starting idle) when it has none. */
  find(key: string, nowUs = Number.NEGATIVE_INFINITY): number {
    let slot = this.index.get(key);
    if (slot !== undefined) {
      this.used[slot] = 1;
      return slot;
    }
    if (this.index.size >= this.max) this.evict(nowUs);
    slot = this.free.pop();
    if (slot === undefined) {
      slot = this.keys.length;
      if (slot === this.tats.length) this.grow();
    }
    this.keys[slot] = key;
    this.tats[slot] = Number.NEGATIVE_INFINITY;
    // Spared by the hand only once used again: a key seen once goes before one in use.
    this.used[slot] = 0;
    this.index.set(key, slot);
    return slot;
  }

  /** The slot of `key`, or undefined when it is not held. */
  slotOf(key: string): number | undefined {
    return this.index.get(key);
  }

  delete(key: string): boolean {
    const slot = this.index.get(key);
    if (slot === undefined) return false;
    this.release(slot);
    return true;
  }

  clear(): void {
    this.index.clear();
    this.keys = [];
    this.free = [];
    this.hand = 0;
  }

  /** Moves the hand over up to `n` slots, dropping keys idle since `idleSinceUs` (TAT <= it). */
  sweep(idleSinceUs: number, n: number): void {
    const count = this.keys.length;
    if (count === 0) return;
    for (let i = 0; i < n; i++) {
      const slot = this.hand;
      this.hand = slot + 1 < count ? slot + 1 : 0;
      if (this.keys[slot] !== undefined && this.tats[slot]! <= idleSinceUs) this.release(slot);
    }
  }

  /** Drops one key: the first idle one the hand meets, or the first not used since its pass. */
  private evict(nowUs: number): void {
    const count = this.keys.length;
    for (;;) {
      const slot = this.hand;
      this.hand = slot + 1 < count ? slot + 1 : 0;
      if (this.keys[slot] === undefined) continue;
      if (this.tats[slot]! <= nowUs || this.used[slot] === 0) {
        this.release(slot);
        return;
      }
      this.used[slot] = 0;
    }
  }

  private release(slot: number): void {
    this.index.delete(this.keys[slot]!);
    this.keys[slot] = undefined;
    this.free.push(slot);
  }

  private grow(): void {
    const n = Math.min(this.tats.length * 2, Math.max(this.max, 16));
    this.tats = grown(this.tats, n);
    this.used = grown(this.used, n);
  }
}
