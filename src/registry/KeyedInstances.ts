import type { Clock } from '../clock/Clock.js';
import { CoarseTime } from '../clock/CoarseTime.js';
import { grown } from '../policies/shared/grown.js';
import type { KeyedKind } from '../protocol/kind.js';
import { KeyIndex } from './KeyIndex.js';
import { NIL, SlotList } from './SlotList.js';

/** Entries looked at from the least recently used end per eviction for room. */
export const EVICTION_SCAN = 64;
/** Idle entries looked at (and instances considered for shelving) per access. */
const SWEEP = 4;
/** @internal Instances kept per keyed name before the least recently used are shelved. */
export const LIVE_INSTANCES = 1024;

/**
 * @internal One instance per key, up to `maxKeys` keys, the least recently used evicted first
 * and keys unused for `idleTimeout` dropped, without any timer: the work is done a few entries
 * at a time on each access, from the least recently used end of the list.
 *
 * Protected instances (an open breaker, a half-open one unless it has waited for a call for the
 * idle timeout, a bulkhead with calls in flight or queued, a rate limiter not back to idle: see
 * {@link KeyedKind.isProtected}) are never evicted; one met at the idle end is moved to the
 * recent end as if used now. When the cap is reached and the
 * {@link EVICTION_SCAN} least recently used entries are all protected, the new key is added
 * over the cap; later accesses keep trying to get back under it, and past `hardMaxKeys` the
 * least recently used instances that yield at the ceiling (open and half-open breakers: see
 * {@link KeyedKind.yieldsAtCeiling}) are evicted as well, so that keys which fail cannot hold
 * memory without bound.
 *
 * Memory: entries live in typed arrays indexed by slot (recency links, last use, the numbers
 * of shelved instances) plus one {@link KeyIndex} from key to slot. At most {@link LIVE_INSTANCES}
 * instances are kept as objects; beyond that the least recently used one that the kind can
 * shelve (a closed breaker with nothing but successes in its window and no listener, an idle
 * bulkhead) is reduced to its numbers and rebuilt from them on its next use. So an idle key
 * costs about a hundred bytes, not the kilobyte or two of a breaker object.
 */
export class KeyedInstances<T> {
  /** Keys held. */
  size = 0;
  private readonly index = new KeyIndex();
  private keys: (string | undefined)[] = [];
  private items: (T | undefined)[] = [];
  /** Recency list of every entry. */
  private readonly recent = new SlotList();
  /** Recency list of the entries that hold an instance. */
  private readonly liveList = new SlotList();
  private liveCount = 0;
  private used = new Float64Array(0);
  private store = new Float64Array(0);
  private capacity = 0;
  private top = 0;
  /** Free slots, chained through `recent.next`. */
  private free = NIL;
  /**
   * True while entries are looked at for eviction: reading a breaker's state may run its
   * event listeners, and a listener that uses this set of keys must not evict under our feet.
   */
  private busy = false;
  /**
   * What {@link get} reads the time from: a reading of the system clock costs more than the
   * rest of a lookup, and a use stamped up to a millisecond early only makes an idle timeout
   * of seconds or minutes end that much sooner.
   */
  private readonly time: { now(): number };

  constructor(
    private readonly kind: KeyedKind<T>,
    private readonly clock: Clock,
    private maxKeys: number,
    private idleTimeout: number,
    private hardMaxKeys = 2 * maxKeys,
    private readonly maxLive = LIVE_INSTANCES,
  ) {
    this.time = clock.cheapNow === true ? clock : CoarseTime.of(clock);
  }

  /** Instances held as objects (the others are shelved as numbers). */
  get live(): number {
    return this.liveCount;
  }

  /** Changes the limits; a lower cap evicts down to it at once (protected entries aside). */
  setLimits(maxKeys: number, idleTimeout: number, hardMaxKeys = 2 * maxKeys): void {
    this.maxKeys = maxKeys;
    this.idleTimeout = idleTimeout;
    this.hardMaxKeys = hardMaxKeys;
    const now = this.clock.now();
    this.sweepAll(now);
    if (this.busy) return;
    this.busy = true;
    try {
      if (!(this.size >= hardMaxKeys && this.makeRoomAtCeiling(maxKeys, now, NIL, this.size))) {
        this.makeRoom(maxKeys, now, NIL, this.size);
      }
    } finally {
      this.busy = false;
    }
  }

  /** The instance for `key`, made (or rebuilt from its numbers) when needed. */
  get(key: string): T {
    const now = this.time.now();
    let slot = this.index.get(key);
    if (this.busy) {
      // Called from an event listener while entries are looked at: no eviction now.
      if (slot === undefined) slot = this.insert(key, now);
      else this.touch(slot, now);
      return this.items[slot] ?? this.revive(slot, key);
    }
    this.busy = true;
    try {
      if (slot !== undefined && this.isIdle(slot, now) && !this.guarded(slot, now)) {
        // Unused for the idle timeout: dropped, whether or not a sweep got to it yet.
        this.remove(slot);
        slot = undefined;
      }
      if (slot === undefined) {
        this.sweep(now);
        if (this.size >= this.maxKeys) this.room(this.maxKeys - 1, now, NIL);
        slot = this.insert(key, now);
      } else {
        this.touch(slot, now);
        this.sweep(now);
        if (this.size > this.maxKeys) this.room(this.maxKeys, now, slot);
      }
      let item = this.items[slot];
      if (item === undefined) item = this.revive(slot, key);
      else this.liveList.toHead(slot);
      if (this.liveCount > this.maxLive) this.shelveSome(slot);
      return item;
    } finally {
      this.busy = false;
    }
  }

  /**
   * The instance for `key` without counting a use (it is rebuilt if shelved), or undefined
   * when the key is not held.
   */
  peek(key: string): T | undefined {
    const slot = this.index.get(key);
    if (slot === undefined) return undefined;
    return this.items[slot] ?? this.revive(slot, key);
  }

  /** Calls `fn` for every key, most recently used first, with its instance or its numbers. */
  forEach(fn: (key: string, item: T | undefined, store: Float64Array, at: number) => void): void {
    // Slots first: `fn` may run code (event listeners) that uses this very set of keys.
    const slots = new Int32Array(this.size);
    let k = 0;
    for (let s = this.recent.head; s !== NIL; s = this.recent.next[s]!) slots[k++] = s;
    const stride = this.kind.stride;
    for (const s of slots) {
      const key = this.keys[s];
      if (key !== undefined) fn(key, this.items[s], this.store, s * stride);
    }
  }

  /** Calls `fn` for every key held as an instance (not shelved). */
  forEachLive(fn: (key: string, item: T) => void): void {
    const slots: number[] = [];
    for (let s = this.liveList.head; s !== NIL; s = this.liveList.next[s]!) slots.push(s);
    for (const s of slots) {
      const item = this.items[s];
      if (item !== undefined) fn(this.keys[s]!, item);
    }
  }

  /** Drops every key whose idle timeout has passed (protected ones aside). */
  sweepAll(now = this.clock.now()): void {
    if (this.busy) return;
    this.busy = true;
    try {
      for (let n = this.size; n > 0 && this.recent.tail !== NIL; n--)
        if (!this.sweepOne(now)) return;
    } finally {
      this.busy = false;
    }
  }

  /** Drops the instance of `key` (disposing it), if held. */
  delete(key: string): void {
    const slot = this.index.get(key);
    if (slot !== undefined) this.remove(slot);
  }

  /** Disposes every instance and forgets every key. */
  clear(): void {
    for (let s = this.liveList.head; s !== NIL; s = this.liveList.next[s]!)
      this.kind.dispose(this.items[s]!);
    this.index.clear();
    this.keys = [];
    this.items = [];
    this.recent.clear();
    this.liveList.clear();
    this.used = new Float64Array(0);
    this.store = new Float64Array(0);
    this.free = NIL;
    this.size = this.liveCount = this.capacity = this.top = 0;
  }

  // ---- eviction ---------------------------------------------------------------------------------

  private isIdle(slot: number, now: number): boolean {
    return now - this.used[slot]! >= this.idleTimeout;
  }

  private guarded(slot: number, now: number): boolean {
    const item = this.items[slot];
    return item !== undefined && this.kind.isProtected(item, now, this.idleTimeout);
  }

  /** A few entries from the idle end: dropped when idle, moved up when protected. */
  private sweep(now: number): void {
    for (let n = 0; n < SWEEP && this.recent.tail !== NIL; n++) if (!this.sweepOne(now)) return;
  }

  private sweepOne(now: number): boolean {
    const slot = this.recent.tail;
    if (!this.isIdle(slot, now)) return false;
    if (this.guarded(slot, now)) this.touch(slot, now);
    else this.remove(slot);
    return true;
  }

  /**
   * Evicts down to `limit` entries as far as a few steps go: at the ceiling without moving
   * protected entries up when the kind lets them yield there, below it with {@link makeRoom}.
   */
  private room(limit: number, now: number, keep: number): void {
    if (this.size >= this.hardMaxKeys && this.makeRoomAtCeiling(limit, now, keep, EVICTION_SCAN)) {
      return;
    }
    this.makeRoom(limit, now, keep, EVICTION_SCAN);
  }

  /**
   * Evicts least recently used entries until at most `limit` remain, looking at no more than
   * `scan` of them; protected ones are moved to the recent end. `keep` is never evicted.
   */
  private makeRoom(limit: number, now: number, keep: number, scan: number): void {
    for (let n = 0; n < scan && this.size > limit && this.recent.tail !== NIL; n++) {
      const slot = this.recent.tail;
      if (slot === keep) return;
      if (this.guarded(slot, now)) this.touch(slot, now);
      else this.remove(slot);
    }
  }

  /**
   * Room at the ceiling (`hardMaxKeys`), for a kind whose protected instances may yield there:
   * evicts entries that are not protected down to `limit`, then, if the set is still at the
   * ceiling, the least recently used ones that yield (open and half-open breakers), looking
   * at no more than `scan` entries each time from the idle end and moving none up, so the
   * oldest go first. `keep` is never evicted. False when the kind has no such instances.
   */
  private makeRoomAtCeiling(limit: number, now: number, keep: number, scan: number): boolean {
    const yields = this.kind.yieldsAtCeiling;
    if (yields === undefined) return false;
    this.evictFromIdleEnd(limit, scan, (slot) => slot !== keep && !this.guarded(slot, now));
    this.evictFromIdleEnd(
      this.hardMaxKeys - 1,
      scan,
      (slot) => slot !== keep && yields.call(this.kind, this.items[slot]!),
    );
    return true;
  }

  /** Evicts entries `evictable` picks, from the idle end, until at most `limit` remain. */
  private evictFromIdleEnd(limit: number, scan: number, evictable: (slot: number) => boolean) {
    let slot = this.recent.tail;
    for (let n = 0; n < scan && this.size > limit && slot !== NIL; n++) {
      const before = this.recent.prev[slot]!;
      if (evictable(slot)) this.remove(slot);
      slot = before;
    }
  }

  /** Shelves instances from the least recently used end until few enough are live. */
  private shelveSome(keep: number): void {
    const stride = this.kind.stride;
    for (let n = 0; n < SWEEP && this.liveCount > this.maxLive; n++) {
      const slot = this.liveList.tail;
      if (slot === keep || slot === NIL) return;
      if (this.kind.shelve(this.items[slot]!, this.store, slot * stride, this.keys[slot]!)) {
        this.items[slot] = undefined;
        this.liveList.unlink(slot);
        this.liveCount--;
      } else {
        this.liveList.toHead(slot);
      }
    }
  }

  // ---- slots --------------------------------------------------------------------------------------

  private insert(key: string, now: number): number {
    let slot = this.free;
    if (slot !== NIL) this.free = this.recent.next[slot]!;
    else {
      if (this.top === this.capacity) this.grow();
      slot = this.top++;
    }
    const stride = this.kind.stride;
    this.store.fill(0, slot * stride, slot * stride + stride);
    this.keys[slot] = key;
    this.items[slot] = undefined;
    this.index.set(key, slot);
    this.used[slot] = now;
    this.recent.link(slot);
    this.size++;
    return slot;
  }

  private revive(slot: number, key: string): T {
    const item = this.kind.create(key);
    this.kind.revive(item, this.store, slot * this.kind.stride);
    this.items[slot] = item;
    this.liveList.link(slot);
    this.liveCount++;
    return item;
  }

  private remove(slot: number): void {
    const item = this.items[slot];
    this.kind.retire(item, this.store, slot * this.kind.stride);
    this.index.delete(this.keys[slot]!);
    this.recent.unlink(slot);
    if (item !== undefined) {
      this.liveList.unlink(slot);
      this.liveCount--;
      this.items[slot] = undefined;
    }
    this.keys[slot] = undefined;
    this.recent.next[slot] = this.free;
    this.free = slot;
    this.size--;
    if (item !== undefined) this.kind.dispose(item);
  }

  private grow(): void {
    const n = this.capacity === 0 ? 16 : this.capacity * 2;
    const stride = this.kind.stride;
    this.recent.grow(n);
    this.liveList.grow(n);
    this.used = grown(this.used, n);
    this.store = grown(this.store, n * stride);
    this.capacity = n;
  }

  private touch(slot: number, now: number): void {
    this.used[slot] = now;
    this.recent.toHead(slot);
  }
}
