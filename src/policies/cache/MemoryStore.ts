import type { Clock } from '../../clock/Clock.js';
import { systemClock } from '../../clock/systemClock.js';
import { checkOptionsObject, clockOption, integer } from '../../validation/validate.js';
import type { CacheEntry, CacheStore } from './store.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The most entries kept, an integer in [1, 16777216]: storing one more drops the least
   * recently used (read or stored). @default 1000
   */
  readonly maxEntries?: number;
  /** The clock `expiresAt` is read on. @default the system clock */
  readonly clock?: Clock;
}

/** Defaults of {@link MemoryStoreOptions}. */
export const memoryStoreDefaults = Object.freeze({ maxEntries: 1_000 });

/** The most entries a memory store may be given room for. */
const MAX_ENTRIES = 16_777_216;

/**
 * A cache store in this process's memory: at most `maxEntries` entries, the least recently
 * used dropped first, and an entry whose `expiresAt` passed dropped when it is read. It keeps
 * the values themselves, not copies: a value mutated after it was stored is served mutated.
 *
 * @example
 * ```ts
 * const store = new MemoryStore({ maxEntries: 10_000 });
 * ```
 */
export class MemoryStore<V = unknown> implements CacheStore<V> {
  /** The most entries kept. */
  readonly maxEntries: number;
  private readonly clock: Clock;
  /** In order of last use, oldest first: a Map iterates in insertion order. */
  private readonly entries = new Map<string, CacheEntry<V>>();

  constructor(options?: MemoryStoreOptions) {
    const o = checkOptionsObject(options, ['maxEntries', 'clock'], '');
    this.maxEntries = integer(
      o.maxEntries,
      'maxEntries',
      memoryStoreDefaults.maxEntries,
      1,
      MAX_ENTRIES,
    );
    this.clock = clockOption(o.clock, 'clock', systemClock);
  }

  /** Entries kept now (expired ones not yet read included). */
  get size(): number {
    return this.entries.size;
  }

  get(key: string): CacheEntry<V> | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.clock.now()) return undefined;
    // Read: now the most recently used.
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: CacheEntry<V>): void {
    const entries = this.entries;
    entries.delete(key);
    if (entries.size >= this.maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(key, entry);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** The keys kept, least recently used first (for tests and inspection). */
  keys(): string[] {
    return [...this.entries.keys()];
  }
}
