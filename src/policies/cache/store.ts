/**
 * One value kept by a cache: when it was stored, until when it is fresh (served without calling),
 * and until when it may still be served stale (while a refresh runs, or when the refresh fails),
 * all on the cache's clock. A store drops an entry once `expiresAt` passed.
 */
export interface CacheEntry<V = unknown> {
  readonly value: V;
  /** When it was stored. */
  readonly storedAt: number;
  /** Until when it is served without calling the inner work. */
  readonly freshUntil: number;
  /** Until when it may be served at all (stale after `freshUntil`); at least `freshUntil`. */
  readonly expiresAt: number;
}

/**
 * Where a cache keeps its entries: in memory ({@link MemoryStore}), or shared between processes
 * (a Redis store). Each method may answer at once or with a promise. A store may drop an entry
 * before its `expiresAt` (to bound its size); never after.
 */
export interface CacheStore<V = unknown> {
  /** The entry of `key`, or undefined when there is none (or it expired). */
  get(key: string): CacheEntry<V> | undefined | Promise<CacheEntry<V> | undefined>;
  /** Keeps `entry` for `key`, replacing any entry it had. */
  set(key: string, entry: CacheEntry<V>): void | Promise<void>;
  /** Drops the entry of `key`, if any. */
  delete(key: string): void | Promise<void>;
  /** Drops every entry. */
  clear(): void | Promise<void>;
}
