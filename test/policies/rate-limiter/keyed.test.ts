import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  KeyedRateLimiter,
  OptionsError,
  RateLimitedError,
  RateLimiter,
  UsageError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { track } from '../../support/async.js';
import { optionsRejection } from '../../support/errors.js';

describe('KeyedRateLimiter', () => {
  it('property: each key decides exactly like a limiter of its own while the cap is not reached', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 400 })), {
          minLength: 1,
          maxLength: 300,
        }),
        (limit, burst, trace) => {
          const clock = new ManualClock();
          const options = { limit, period: 1_000, burst, clock };
          const keyed = new KeyedRateLimiter(options);
          const own = new Map<string, RateLimiter>();
          for (const [k, gap] of trace) {
            clock.advance(gap);
            const key = `k${k}`;
            if (!own.has(key)) own.set(key, new RateLimiter(options));
            expect(keyed.tryAcquire(key)).toBe(own.get(key)!.tryAcquire());
          }
          expect(keyed.size).toBeLessThanOrEqual(8);
        },
      ),
    );
  });

  it("a refusal a caller keeps never changes when another key's refusal waits for another time", async () => {
    const clock = new ManualClock();
    const keyed = new KeyedRateLimiter({ limit: 1, period: 1_000, clock });
    await keyed.acquire('a');
    const a = (await keyed
      .acquire('a', 1, { maxWait: 0 })
      .catch((e: unknown) => e)) as RateLimitedError;
    clock.advance(500);
    await keyed.acquire('b');
    const b = (await keyed
      .acquire('b', 1, { maxWait: 0 })
      .catch((e: unknown) => e)) as RateLimitedError;
    expect(a.retryAfter).toBe(500);
    expect(b.retryAfter).toBe(1_000);
  });

  it('property: never holds more than maxKeys keys', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 300 }),
        (maxKeys, keys) => {
          const limiter = new KeyedRateLimiter({ limit: 1, maxKeys, clock: new ManualClock() });
          for (const k of keys) {
            limiter.tryAcquire(String(k));
            expect(limiter.size).toBeLessThanOrEqual(maxKeys);
          }
        },
      ),
    );
  });

  it('past the cap forgets the least recently used key first', () => {
    const clock = new ManualClock();
    const limiter = new KeyedRateLimiter({ limit: 1, period: 60_000, maxKeys: 2, clock });
    limiter.tryAcquire('a');
    limiter.tryAcquire('b');
    expect(limiter.tryAcquire('a')).toBeGreaterThan(0); // refused, and now the most recent
    limiter.tryAcquire('c'); // evicts b
    expect(limiter.tryAcquire('a')).toBeGreaterThan(0);
    expect(limiter.tryAcquire('b')).toBe(0);
  });

  it('drops keys back to idle as calls go by, without any timer', () => {
    const clock = new ManualClock();
    const limiter = new KeyedRateLimiter({ limit: 10, period: 1_000, clock });
    for (let i = 0; i < 1_000; i++) limiter.tryAcquire(`user-${i}`);
    expect(limiter.size).toBe(1_000);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(100);
    // Every key is idle again; a second later calls on one hot key sweep the rest away.
    for (let i = 0; i < 5_000; i++) limiter.tryAcquire('hot');
    expect(limiter.size).toBe(1_001);
    clock.advance(1_000);
    for (let i = 0; i < 5_000; i++) {
      limiter.tryAcquire('hot');
      clock.advance(0.1);
    }
    expect(limiter.size).toBe(1);
  });

  it('acquire waits for the key’s reserved turn; other keys are not held up', async () => {
    const clock = new ManualClock();
    const limiter = new KeyedRateLimiter({ limit: 1, period: 100, maxWait: 500, clock });
    const times: string[] = [];
    const calls = [
      limiter.acquire('a').then(() => times.push(`a@${clock.now()}`)),
      limiter.acquire('a').then(() => times.push(`a@${clock.now()}`)),
      limiter.acquire('b').then(() => times.push(`b@${clock.now()}`)),
    ];
    await clock.advanceAsync(100);
    await Promise.all(calls);
    expect(times).toEqual(['a@0', 'b@0', 'a@100']);
    const refused = await limiter.acquire('a', 1, { maxWait: 50 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(clock.pendingTimers).toBe(0);
  });

  it('an aborted or disposed wait rejects; events carry the key', async () => {
    const clock = new ManualClock();
    const limiter = new KeyedRateLimiter({ limit: 1, period: 100, maxWait: 500, clock });
    const events: unknown[] = [];
    limiter.onRejected((e) => events.push(e));
    limiter.tryAcquire('a');
    const controller = new AbortController();
    const aborted = track(limiter.acquire('a', 1, { signal: controller.signal }));
    const disposed = track(limiter.acquire('a'));
    controller.abort(new Error('stop'));
    limiter.dispose();
    await Promise.all([aborted.done, disposed.done]);
    expect(aborted.error).toMatchObject({ message: 'stop' });
    expect(disposed.error).toBeInstanceOf(UsageError);
    const other = new KeyedRateLimiter({ limit: 1, period: 100, clock });
    other.onRejected((e) => events.push(e));
    other.tryAcquire('x');
    other.tryAcquire('x');
    expect(events).toEqual([{ permits: 1, retryAfter: 100, key: 'x' }]);
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object', { id: 1 }],
    ['a symbol', Symbol('k')],
    ['a string of 1,025 characters', 'k'.repeat(1_025)],
  ])('refuses %s as a key with an OptionsError naming `key`, taking nothing', async (_, key) => {
    const clock = new ManualClock();
    const limiter = new KeyedRateLimiter({ limit: 1, maxWait: 100, clock });
    for (const call of [
      () => limiter.tryAcquire(key as string),
      () => limiter.acquire(key as string),
    ]) {
      expect(await optionsRejection(call)).toMatchObject({
        option: 'key',
        expected: 'a string of at most 1024 characters',
      });
    }
    expect(limiter.size).toBe(0);
    expect(limiter.tryAcquire('k'.repeat(1_024))).toBe(0);
  });

  it('an aborted wait gives its reserved turn back, as the plain limiter does', async () => {
    const clock = new ManualClock();
    const options = { limit: 1, period: 100, maxWait: 500, clock };
    const keyed = new KeyedRateLimiter(options);
    const plain = new RateLimiter(options);
    const admitted: string[] = [];
    const scenarios = [
      [
        'keyed',
        (signal?: AbortSignal) => keyed.acquire('a', 1, { signal }),
        () => keyed.tryAcquire('a'),
      ],
      ['plain', (signal?: AbortSignal) => plain.acquire(1, { signal }), () => plain.tryAcquire()],
    ] as const;
    const aborted: ReturnType<typeof track>[] = [];
    for (const [name, acquire, tryAcquire] of scenarios) {
      expect(tryAcquire()).toBe(0);
      const controller = new AbortController();
      aborted.push(track(acquire(controller.signal)));
      controller.abort(new Error('gone'));
      // The turn at 100 is free again: the next caller takes it rather than the one at 200.
      void acquire().then(() => admitted.push(`${name}@${clock.now()}`));
    }
    await clock.advanceAsync(300);
    for (const t of aborted) expect(t.error).toMatchObject({ message: 'gone' });
    expect(admitted).toEqual(['keyed@100', 'plain@100']);
    expect(keyed.tryAcquire('a')).toBe(0);
    expect(plain.tryAcquire()).toBe(0);
  });

  it('an aborted wait keeps its turn taken when a later reservation depends on it', async () => {
    const clock = new ManualClock();
    const keyed = new KeyedRateLimiter({ limit: 1, period: 100, maxWait: 500, clock });
    keyed.tryAcquire('a');
    const controller = new AbortController();
    const first = track(keyed.acquire('a', 1, { signal: controller.signal }));
    const times: number[] = [];
    void keyed.acquire('a').then(() => times.push(clock.now()));
    controller.abort(new Error('gone'));
    await clock.advanceAsync(300);
    await first.done;
    // Giving the turn at 100 back would let a third caller in before the one reserved at 200.
    expect(times).toEqual([200]);
    expect(keyed.tryAcquire('a')).toBe(0);
    expect(keyed.tryAcquire('a')).toBeGreaterThan(0);
  });

  it('rejects a bad maxKeys at construction', () => {
    expect(() => new KeyedRateLimiter({ limit: 1, maxKeys: 0 })).toThrow(OptionsError);
    expect(() => new KeyedRateLimiter({ limit: 1, maxKeys: 1.5 })).toThrow(/maxKeys/);
  });
});
