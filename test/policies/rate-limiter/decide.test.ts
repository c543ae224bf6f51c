/**
 * `decide` on the in-memory limiters: the same decision as `tryAcquire`, with the state it
 * leaves (remaining, exact wait, reset) for `RateLimit` headers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  KeyedRateLimiter,
  type RateLimitedEvent,
  RateLimiter,
  rateLimiter,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { optionsError } from '../../support/errors.js';

describe('RateLimiter.decide', () => {
  it('counts remaining down to 0, then refuses with the exact wait of the GCRA', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 10, period: 1_000, burst: 3, clock });
    const seen = [limiter.decide(), limiter.decide(), limiter.decide()];
    expect(seen.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    clock.advance(30);
    const refused = limiter.decide();
    // The first permit taken at 0 is free again at 100 ms: 70 ms after now.
    expect(refused).toEqual({
      allowed: false,
      limit: 3,
      windowMs: 300,
      remaining: 0,
      retryAfterMs: 70,
      resetMs: 270,
      degraded: false,
    });
    expect(limiter.tryAcquire()).toBe(70);
  });

  it('a burst of N is admitted, then one is refused', () => {
    const limiter = new RateLimiter({ limit: 5, period: 1_000, clock: new ManualClock() });
    for (let i = 0; i < 5; i++) expect(limiter.decide().allowed).toBe(true);
    expect(limiter.decide()).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 200 });
  });

  it('resetMs falls as time passes and remaining grows back to the burst', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 4, period: 1_000, clock });
    limiter.decide(4);
    const resets: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      clock.advance(250);
      const d = limiter.decide();
      resets.push(d.resetMs);
      remaining.push(d.remaining);
    }
    // Each step frees one permit and takes one: the TAT stays 1,000 ms ahead of the start.
    expect(resets).toEqual([1_000, 1_000, 1_000, 1_000]);
    expect(remaining).toEqual([0, 0, 0, 0]);
    clock.advance(600);
    const after = limiter.decide();
    expect(after.resetMs).toBe(650);
    expect(after.remaining).toBe(1);
    clock.advance(650);
    expect(limiter.decide()).toMatchObject({ resetMs: 250, remaining: 3 });
  });

  it('a refusal takes nothing; reservations of waiting acquire calls count as taken', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 2, period: 1_000, clock });
    limiter.decide(2);
    const waiting = limiter.acquire(1, { maxWait: 1_000 });
    expect(limiter.decide()).toMatchObject({ allowed: false, retryAfterMs: 1_000, resetMs: 1_500 });
    clock.advance(500);
    await waiting;
    expect(limiter.decide()).toMatchObject({ allowed: false, remaining: 0, resetMs: 1_000 });
  });

  it('checks permits, emits onRejected and counts as tryAcquire does', () => {
    const limiter = new RateLimiter({ limit: 2, period: 1_000, clock: new ManualClock() });
    const events: RateLimitedEvent[] = [];
    limiter.onRejected((e) => events.push(e));
    expect(optionsError(() => limiter.decide(3))).toMatchObject({ option: 'permits', value: 3 });
    expect(optionsError(() => limiter.decide(0.5))).toMatchObject({ option: 'permits' });
    limiter.decide(2);
    limiter.decide();
    expect(events).toEqual([{ permits: 1, retryAfter: 500 }]);
    expect(limiter.stats()).toMatchObject({ admitted: 1, rejected: 1, available: 0 });
  });

  it('property: decides as tryAcquire does, with remaining equal to available afterwards', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 500 })), {
          minLength: 1,
          maxLength: 200,
        }),
        (limit, burst, trace) => {
          const clock = new ManualClock();
          const options = { limit, period: 1_000, burst, clock };
          const plain = rateLimiter(options);
          const deciding = rateLimiter(options);
          for (const [asked, gap] of trace) {
            clock.advance(gap);
            const permits = Math.min(asked, burst);
            const wait = plain.tryAcquire(permits);
            const d = deciding.decide(permits);
            expect(d.allowed).toBe(wait === 0);
            expect(d.retryAfterMs).toBe(wait);
            expect(d.remaining).toBe(deciding.available);
            expect(d.remaining).toBeLessThanOrEqual(burst);
            if (!d.allowed) expect(d.remaining).toBeLessThan(permits);
            expect(d.resetMs).toBeGreaterThanOrEqual(0);
            expect(d.resetMs).toBeLessThanOrEqual(d.windowMs);
          }
          expect(deciding.stats()).toEqual(plain.stats());
        },
      ),
      { seed: 29, numRuns: 200 },
    );
  });
});

describe('KeyedRateLimiter.decide', () => {
  it('counts remaining down per key, then refuses with the exact wait', () => {
    const clock = new ManualClock();
    const keyed = new KeyedRateLimiter({ limit: 2, period: 1_000, clock });
    expect(keyed.decide('a')).toEqual({
      allowed: true,
      limit: 2,
      windowMs: 1_000,
      remaining: 1,
      retryAfterMs: 0,
      resetMs: 500,
      degraded: false,
    });
    expect(keyed.decide('a').remaining).toBe(0);
    expect(keyed.decide('b').remaining).toBe(1);
    clock.advance(100);
    expect(keyed.decide('a')).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 400,
      resetMs: 900,
    });
    expect(keyed.tryAcquire('a')).toBe(400);
    clock.advance(900);
    expect(keyed.decide('a')).toMatchObject({ allowed: true, remaining: 1, resetMs: 500 });
  });

  it('checks the key and permits, and emits onRejected with the key, as tryAcquire does', () => {
    const keyed = new KeyedRateLimiter({ limit: 1, period: 1_000, clock: new ManualClock() });
    const events: RateLimitedEvent[] = [];
    keyed.onRejected((e) => events.push(e));
    expect(optionsError(() => keyed.decide(42 as unknown as string))).toMatchObject({
      option: 'key',
    });
    expect(optionsError(() => keyed.decide('k', 2))).toMatchObject({ option: 'permits' });
    keyed.decide('k');
    keyed.decide('k');
    expect(events).toEqual([{ permits: 1, retryAfter: 1_000, key: 'k' }]);
  });

  it('property: each key decides as tryAcquire does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(
          fc.tuple(
            fc.constantFrom('a', 'b', 'c'),
            fc.integer({ min: 1, max: 5 }),
            fc.integer({ min: 0, max: 400 }),
          ),
          { minLength: 1, maxLength: 200 },
        ),
        (limit, burst, trace) => {
          const clock = new ManualClock();
          const options = { limit, period: 1_000, burst, clock };
          const plain = new KeyedRateLimiter(options);
          const deciding = new KeyedRateLimiter(options);
          const own = new Map<string, RateLimiter>();
          for (const [key, asked, gap] of trace) {
            clock.advance(gap);
            const permits = Math.min(asked, burst);
            if (!own.has(key)) own.set(key, new RateLimiter(options));
            const d = deciding.decide(key, permits);
            expect(d.retryAfterMs).toBe(plain.tryAcquire(key, permits));
            expect(d).toEqual(own.get(key)!.decide(permits));
          }
        },
      ),
      { seed: 29, numRuns: 200 },
    );
  });
});
