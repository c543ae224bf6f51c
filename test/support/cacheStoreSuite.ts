import { expect, it } from 'vitest';
import type { CacheEntry, CacheStore } from '../../src/policies/cache/store.js';
import { ManualClock } from '../../src/testing/index.js';

/** An entry stored at `now`, fresh for `fresh` ms and kept for `keep` ms. */
export function entryAt<V>(value: V, now: number, fresh: number, keep = fresh): CacheEntry<V> {
  return { value, storedAt: now, freshUntil: now + fresh, expiresAt: now + keep };
}

/**
 * What every cache store does, whatever keeps its entries: a memory store runs it here, a store
 * shared between processes runs the same checks against its server. `make` builds an empty
 * store whose expiry reads `clock`.
 */
export function cacheStoreSuite(make: (clock: ManualClock) => CacheStore<unknown>): void {
  it('answers nothing for a key never stored', async () => {
    const store = make(new ManualClock());
    expect(await store.get('missing')).toBeUndefined();
  });

  it('answers the entry stored for a key, replaced by the next one stored', async () => {
    const clock = new ManualClock();
    const store = make(clock);
    await store.set('a', entryAt({ n: 1 }, 0, 100));
    expect(await store.get('a')).toEqual(entryAt({ n: 1 }, 0, 100));
    await store.set('a', entryAt({ n: 2 }, 0, 100));
    expect((await store.get('a'))?.value).toEqual({ n: 2 });
  });

  it('keeps an entry until its expiresAt, stale after freshUntil, and drops it then', async () => {
    const clock = new ManualClock();
    const store = make(clock);
    await store.set('a', entryAt('v', 0, 100, 300));
    clock.advance(299);
    expect((await store.get('a'))?.value).toBe('v');
    clock.advance(1);
    expect(await store.get('a')).toBeUndefined();
  });

  it('drops one key on delete and every key on clear', async () => {
    const store = make(new ManualClock());
    await store.set('a', entryAt(1, 0, 100));
    await store.set('b', entryAt(2, 0, 100));
    await store.set('c', entryAt(3, 0, 100));
    await store.delete('a');
    expect(await store.get('a')).toBeUndefined();
    expect((await store.get('b'))?.value).toBe(2);
    await store.clear();
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('c')).toBeUndefined();
  });
}
