/**
 * The shared rate limiter in one thread: the same decisions as the in-process limiter (the
 * reference GCRA on random traces), shared by every instance built from one state, and the
 * checks of its state and options. Across real worker threads: workers.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  OptionsError,
  pipeline,
  RateLimitedError,
  RateLimiter,
  Registry,
  UsageError,
} from '../../src/index.js';
import { ManualClock, SharedManualClock } from '../../src/testing/index.js';
import { SharedRateLimiter } from '../../src/workers/index.js';
import { optionsError } from '../support/errors.js';

describe('SharedRateLimiter', () => {
  it('property: instances built from one state decide a random trace as one in-process limiter does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 300 }),
            fc.integer({ min: 1, max: 20 }),
            fc.integer({ min: 0, max: 2 }),
          ),
          { minLength: 1, maxLength: 200 },
        ),
        (limit, period, burst, trace) => {
          const clock = new ManualClock(5_000);
          const model = new RateLimiter({ limit, period, burst, clock });
          const first = new SharedRateLimiter({ limit, period, burst, clock });
          const copies = [first, new SharedRateLimiter(first.state, { clock })];
          copies.push(new SharedRateLimiter(structuredClone(first.state), { clock }));
          for (const [gap, want, which] of trace) {
            clock.advance(gap);
            const permits = Math.min(want, burst);
            expect(copies[which]!.tryAcquire(permits)).toBe(model.tryAcquire(permits));
            expect(copies[(which + 1) % 3]!.available).toBe(model.available);
          }
        },
      ),
    );
  });

  it('is a RateLimiter: a pipeline refuses with RateLimitedError and the exact wait, decide reports the shared state', async () => {
    const clock = new ManualClock();
    const here = new SharedRateLimiter({ limit: 2, period: 1_000, clock });
    const there = new SharedRateLimiter(here.state, { clock });
    expect(here).toBeInstanceOf(RateLimiter);
    await pipeline(here).execute(() => 1);
    await pipeline(there).execute(() => 2);
    const error = await pipeline(here)
      .execute(() => 3)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfter).toBe(500);
    expect(there.decide()).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 500 });
    expect(here.stats()).toMatchObject({ admitted: 1, rejected: 1 });
    expect(there.stats()).toMatchObject({ admitted: 1, rejected: 1 });
  });

  it('acquire waits for a turn reserved in the shared state, and an aborted wait gives it back', async () => {
    const clock = new SharedManualClock();
    const here = new SharedRateLimiter({ limit: 1, period: 100, maxWait: 1_000, clock });
    const there = new SharedRateLimiter(here.state, { clock });
    expect(here.tryAcquire()).toBe(0);
    let admitted = false;
    const waiting = here.acquire().then(() => {
      admitted = true;
    });
    // The turn at 100 ms is taken: the other instance finds the next at 200 ms.
    expect(there.tryAcquire()).toBe(200);
    const abort = new AbortController();
    const gone = there.acquire(1, { signal: abort.signal }).catch((e: unknown) => e);
    expect(there.tryAcquire()).toBe(300);
    abort.abort(new Error('left'));
    expect(await gone).toMatchObject({ message: 'left' });
    expect(there.tryAcquire()).toBe(200);
    clock.advance(100);
    await waiting;
    expect(admitted).toBe(true);
  });

  it('reads a clock whose time lives in shared memory, moved by any instance of it', () => {
    const clock = new SharedManualClock(1_000);
    const other = new SharedManualClock(clock.state);
    const limiter = new SharedRateLimiter({ limit: 1, period: 50, clock });
    const copy = new SharedRateLimiter(limiter.state, { clock: other });
    expect(copy.tryAcquire()).toBe(0);
    expect(limiter.tryAcquire()).toBe(50);
    other.advance(50);
    expect(clock.now()).toBe(1_050);
    expect(limiter.tryAcquire()).toBe(0);
  });

  it('validates its options as RateLimiter does, and refuses anything but a state as a state', () => {
    expect(optionsError(() => new SharedRateLimiter({ limit: 0 }))).toMatchObject({
      option: 'limit',
      value: 0,
    });
    expect(optionsError(() => new SharedRateLimiter({ limit: 10, burst: -1 })).option).toBe(
      'burst',
    );
    const state = new SharedRateLimiter({ limit: 10 }).state;
    for (const bad of [
      { ...state, kind: 'bulkhead' },
      { ...state, version: 2 },
      { ...state, buffer: new SharedArrayBuffer(128) },
      { ...state, buffer: new ArrayBuffer(128) },
    ]) {
      const error = optionsError(() => new SharedRateLimiter(bad as typeof state));
      expect(error.option).toBe('state');
      expect(error.expected).toContain('SharedRateLimiter');
    }
  });

  it('holds its options in the state, without the clock, and cannot be reconfigured', () => {
    const clock = new ManualClock();
    const limiter = new SharedRateLimiter({ limit: 5, period: '1s', name: 'api', clock });
    expect(limiter.state.options).toEqual({ limit: 5, period: '1s', name: 'api' });
    expect(Object.isFrozen(limiter.state)).toBe(true);
    expect(new SharedRateLimiter(limiter.state).name).toBe('api');
    expect(() => limiter.reconfigure({ limit: 6 })).toThrow(UsageError);
    expect(() => new SharedRateLimiter({ limit: 5, clock: {} as ManualClock })).toThrow(
      OptionsError,
    );
  });

  it('shows in a registry as a rate limiter, with what this thread counted', () => {
    const clock = new ManualClock();
    const limiter = new SharedRateLimiter({ limit: 3, period: 1_000, clock });
    const copy = new SharedRateLimiter(limiter.state, { clock });
    const registry = new Registry();
    registry.register('api', limiter);
    expect(copy.tryAcquire(2)).toBe(0);
    expect(limiter.tryAcquire()).toBe(0);
    expect(limiter.tryAcquire()).toBeGreaterThan(0);
    const [listed] = registry.snapshot().instances;
    expect(listed).toMatchObject({
      kind: 'rateLimiter',
      name: 'api',
      stats: { admitted: 1, rejected: 1, available: 0, burst: 3 },
    });
  });
});
