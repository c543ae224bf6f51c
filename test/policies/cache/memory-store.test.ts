import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../../src/index.js';
import { MemoryStore } from '../../../src/policies/cache/MemoryStore.js';
import { ManualClock } from '../../../src/testing/index.js';
import { cacheStoreSuite, entryAt } from '../../support/cacheStoreSuite.js';

describe('MemoryStore: what every cache store does', () => {
  cacheStoreSuite((clock) => new MemoryStore({ clock }));
});

describe('MemoryStore: at most maxEntries, the least recently used dropped first', () => {
  it('drops the oldest stored entry when one more is stored', () => {
    const store = new MemoryStore({ maxEntries: 3, clock: new ManualClock() });
    for (const key of ['a', 'b', 'c', 'd']) store.set(key, entryAt(key, 0, 100));
    expect(store.keys()).toEqual(['b', 'c', 'd']);
    expect(store.get('a')).toBeUndefined();
  });

  it('counts a read as a use: the entry read last is dropped last', () => {
    const store = new MemoryStore({ maxEntries: 3, clock: new ManualClock() });
    for (const key of ['a', 'b', 'c']) store.set(key, entryAt(key, 0, 100));
    store.get('a');
    store.set('d', entryAt('d', 0, 100));
    expect(store.keys()).toEqual(['c', 'a', 'd']);
  });

  it('replacing an entry makes it the most recently used without dropping another', () => {
    const store = new MemoryStore({ maxEntries: 2, clock: new ManualClock() });
    store.set('a', entryAt(1, 0, 100));
    store.set('b', entryAt(2, 0, 100));
    store.set('a', entryAt(3, 0, 100));
    expect(store.keys()).toEqual(['b', 'a']);
    expect(store.size).toBe(2);
  });

  it('drops an expired entry when it is read', () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock });
    store.set('a', entryAt(1, 0, 10));
    clock.advance(10);
    expect(store.get('a')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('holds no more than maxEntries however many keys arrive', () => {
    const store = new MemoryStore({ maxEntries: 100, clock: new ManualClock() });
    for (let i = 0; i < 100_000; i++) store.set(`k${i}`, entryAt(i, 0, 100));
    expect(store.size).toBe(100);
    expect(store.keys()[0]).toBe('k99900');
  });

  it('checks its options, naming the field and the range', () => {
    expect(() => new MemoryStore({ maxEntries: 0 })).toThrow(OptionsError);
    expect(() => new MemoryStore({ maxEntries: 1.5 })).toThrow(/maxEntries.*\[1, 16777216\]/);
    expect(() => new MemoryStore({ maxEntrys: 3 } as never)).toThrow(/did you mean `maxEntries`/);
  });
});
