import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  CircuitBreaker,
  OptionsError,
  pipeline,
  RateLimitedError,
  RateLimiter,
  rateLimiter,
  retry,
  UsageError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { track } from '../../support/async.js';
import { optionsError } from '../../support/errors.js';

/** The GCRA decision, written out plainly: the reference the limiter must match. */
function referenceDecide(
  state: { tat: number },
  nowUs: number,
  permits: number,
  T: number,
  B: number,
) {
  const tat = Math.max(state.tat, nowUs);
  const newTat = tat + permits * T;
  const allowAt = newTat - B * T;
  if (nowUs < allowAt) return allowAt - nowUs;
  state.tat = newTat;
  return 0;
}

describe('RateLimiter', () => {
  it('admits `burst` calls at once from idle, then refuses with the exact wait until the next permit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 200 }),
        (limit, period, burst) => {
          fc.pre((period * 1_000) / limit >= 1);
          const clock = new ManualClock(12_345);
          const limiter = new RateLimiter({ limit, period, burst, clock });
          for (let i = 0; i < burst; i++) expect(limiter.tryAcquire()).toBe(0);
          const interval = Math.round((period * 1_000) / limit) / 1_000;
          expect(limiter.tryAcquire()).toBeCloseTo(interval, 9);
          expect(limiter.available).toBe(0);
          clock.advance(interval);
          expect(limiter.tryAcquire()).toBe(0);
        },
      ),
    );
  });

  it('property: every decision on a random trace matches the reference GCRA, and the rate holds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 20 })), {
          minLength: 1,
          maxLength: 200,
        }),
        (limit, period, burst, trace) => {
          const clock = new ManualClock();
          const limiter = rateLimiter({ limit, period, burst, clock });
          const T = Math.round((period * 1_000) / limit);
          const state = { tat: Number.NEGATIVE_INFINITY };
          let admitted = 0;
          for (const [gap, want] of trace) {
            clock.advance(gap);
            const permits = Math.min(want, burst);
            const expected = referenceDecide(state, clock.now() * 1_000, permits, T, burst);
            const wait = limiter.tryAcquire(permits);
            expect(wait * 1_000).toBeCloseTo(expected, 6);
            if (wait === 0) admitted += permits;
          }
          // Never more than the burst plus what the rate allows over the elapsed time.
          expect(admitted).toBeLessThanOrEqual(burst + Math.floor((clock.now() * 1_000) / T));
        },
      ),
    );
  });

  it('a token bucket (capacity, refillRate) is the same limiter as burst and limit per second', () => {
    const clock = new ManualClock();
    const bucket = new RateLimiter({ capacity: 5, refillRate: 4, clock });
    const rate = new RateLimiter({ limit: 4, period: 1_000, burst: 5, clock });
    for (let t = 0; t < 40; t++) {
      expect(bucket.tryAcquire()).toBe(rate.tryAcquire());
      clock.advance(t % 3 === 0 ? 300 : 10);
    }
    expect(bucket.burst).toBe(5);
    expect(bucket.interval).toBe(250);
  });

  it('tryAcquire neither allocates a promise nor takes anything when it refuses', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: 1_000, clock });
    expect(limiter.tryAcquire()).toBe(0);
    expect(limiter.tryAcquire()).toBe(1_000);
    clock.advance(400);
    expect(limiter.tryAcquire()).toBe(600);
    expect(limiter.stats()).toMatchObject({ admitted: 1, rejected: 2 });
  });

  it('refuses more permits than the burst, or a non-integer count, with an OptionsError naming permits', () => {
    const limiter = new RateLimiter({ limit: 10, burst: 3, clock: new ManualClock() });
    for (const bad of [4, 0, -1, 1.5, Number.NaN]) {
      const error = optionsError(() => limiter.tryAcquire(bad));
      expect(error).toMatchObject({ option: 'permits', value: bad });
      expect(error.message).toContain('[1, 3]');
    }
    expect(() => limiter.acquire(4)).toThrow(OptionsError);
    expect(() => new RateLimiter({ limit: 10, burst: 3, permits: 4 })).toThrow(OptionsError);
  });

  it('acquire reserves turns: waiters are admitted in order at the exact times the rate allows', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 10, period: 1_000, burst: 1, maxWait: 1_000, clock });
    const admittedAt: number[] = [];
    const calls = [0, 1, 2, 3].map((i) =>
      limiter.acquire().then(() => admittedAt.push(i * 1_000 + clock.now())),
    );
    await clock.advanceAsync(1_000);
    await Promise.all(calls);
    expect(admittedAt).toEqual([0, 1_100, 2_200, 3_300]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('acquire refuses at once, taking nothing, when the wait would exceed maxWait', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: 1_000, clock });
    await limiter.acquire();
    const error = await limiter.acquire(1, { maxWait: 999 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ code: 'ERR_BREAKWATER_RATE_LIMITED', policy: 'rateLimiter' });
    expect((error as RateLimitedError).retryAfter).toBe(1_000);
    clock.advance(250);
    expect((error as RateLimitedError).retryAfter).toBe(750);
    const ok = track(limiter.acquire(1, { maxWait: 750 }));
    await clock.advanceAsync(750);
    expect(ok.ok).toBe(true);
  });

  it('a refusal a caller keeps never changes when a later refusal waits for another time; refusals until the next admission share one error', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: 1_000, clock });
    await limiter.acquire();
    const first = (await limiter
      .acquire(1, { maxWait: 0 })
      .catch((e: unknown) => e)) as RateLimitedError;
    clock.advance(1_000);
    await limiter.acquire();
    const second = (await limiter
      .acquire(1, { maxWait: 0 })
      .catch((e: unknown) => e)) as RateLimitedError;
    const third = (await limiter
      .acquire(1, { maxWait: 0 })
      .catch((e: unknown) => e)) as RateLimitedError;
    expect(first.retryAfter).toBe(0);
    expect(second.retryAfter).toBe(1_000);
    expect(third).toBe(second);
  });

  it('an aborted waiter rejects with the reason and gives its turn back when it was the last one', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: 100, maxWait: 1_000, clock });
    expect(limiter.tryAcquire()).toBe(0);
    const controller = new AbortController();
    const waiting = track(limiter.acquire(1, { signal: controller.signal }));
    expect(limiter.tryAcquire()).toBe(200);
    controller.abort(new Error('gone'));
    await waiting.done;
    expect(waiting).toMatchObject({ ok: false, error: { message: 'gone' } });
    // The turn at 100 ms is free again.
    expect(limiter.tryAcquire()).toBe(100);
    await clock.advanceAsync(100);
    expect(limiter.tryAcquire()).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('dispose refuses waiting callers with UsageError and leaves no timer', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: 100, maxWait: 1_000, clock });
    limiter.tryAcquire();
    const waiting = track(limiter.acquire());
    limiter.dispose();
    await waiting.done;
    expect(waiting.error).toBeInstanceOf(UsageError);
    expect(clock.pendingTimers).toBe(0);
  });

  it('emits an event per refusal with the permits asked and the wait', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 2, period: 1_000, burst: 2, clock });
    const events: unknown[] = [];
    limiter.onRejected((e) => events.push(e));
    limiter.tryAcquire(2);
    limiter.tryAcquire(1);
    expect(events).toEqual([{ permits: 1, retryAfter: 500 }]);
  });
});

describe('RateLimiter on a clock that is costly to read', () => {
  it('reads the clock once per 64 decisions or per millisecond, not per decision', () => {
    class CountingClock extends ManualClock {
      reads = 0;
      override now(): number {
        this.reads++;
        return super.now();
      }
    }
    const clock = new CountingClock();
    clock.cheapNow = false;
    const limiter = new RateLimiter({ limit: 1_000, period: 1_000, burst: 10, clock });
    let admitted = 0;
    for (let i = 0; i < 640; i++) if (limiter.tryAcquire() === 0) admitted++;
    expect(clock.reads).toBe(10);
    expect(admitted).toBe(10);
    clock.advance(1);
    expect(limiter.tryAcquire()).toBe(0);
    expect(clock.reads).toBe(11);
  });
});

describe('RateLimiter options', () => {
  it.each([
    ['no rate', {}, 'limit'],
    ['a zero limit', { limit: 0 }, 'limit'],
    ['a fractional limit', { limit: 2.5 }, 'limit'],
    ['more than one call per microsecond', { limit: 2_000, period: 1 }, 'limit'],
    ['a zero period', { limit: 1, period: 0 }, 'period'],
    ['both forms', { limit: 1, capacity: 2, refillRate: 1 }, 'limit'],
    ['a bucket without capacity', { refillRate: 1 }, 'capacity'],
    ['a bucket without refill rate', { capacity: 1 }, 'refillRate'],
    ['a zero refill rate', { capacity: 1, refillRate: 0 }, 'refillRate'],
    ['a burst beyond 2^31 ms of the rate', { limit: 1, period: 1_000_000, burst: 3_000 }, 'burst'],
    ['a negative maxWait', { limit: 1, maxWait: -1 }, 'maxWait'],
    ['an unknown option', { limit: 1, brust: 3 }, 'brust'],
  ])('rejects %s at construction, naming the option', (_, options, option) => {
    expect(optionsError(() => new RateLimiter(options as never)).option).toBe(option);
  });
});

describe('a rate limiter in a pipeline', () => {
  it('refuses with RateLimitedError; tryExecute returns the refusal as a result', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: 1_000, clock });
    const p = pipeline(limiter);
    expect(await p.execute(() => 'a')).toBe('a');
    await expect(p.execute(() => 'b')).rejects.toBeInstanceOf(RateLimitedError);
    const r = await p.tryExecute(() => 'c');
    expect(r).toMatchObject({ ok: false, rejected: true });
    expect(() => p.executeSync(() => 'd')).toThrow(RateLimitedError);
    clock.advance(1_000);
    expect(p.executeSync(() => 'e')).toBe('e');
  });

  it('with maxWait, calls wait for their reserved turn; an aborted wait rejects with the reason', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: 100, maxWait: 250, clock });
    const p = pipeline(limiter);
    const started: number[] = [];
    const run = (signal?: AbortSignal) =>
      p.execute(
        () => {
          started.push(clock.now());
          return 'ok';
        },
        { signal },
      );
    const a = track(run());
    const b = track(run());
    const controller = new AbortController();
    const c = track(run(controller.signal));
    const d = track(run());
    await Promise.resolve();
    controller.abort(new Error('cancelled'));
    await clock.advanceAsync(300);
    await Promise.all([a.done, b.done, c.done, d.done]);
    expect(a.ok).toBe(true);
    expect(b.ok).toBe(true);
    expect(c).toMatchObject({ ok: false, error: { message: 'cancelled' } });
    // d wanted a turn 300 ms away: more than maxWait.
    expect(d.error).toBeInstanceOf(RateLimitedError);
    expect(started).toEqual([0, 100]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a refusal is neither counted by a breaker outside it nor retried', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 1 } });
    const limiter = new RateLimiter({ limit: 1, period: 1_000, clock });
    let calls = 0;
    const p = pipeline(retry({ maxAttempts: 3, delay: 1, clock }), breaker, limiter);
    await p.execute(() => ++calls);
    const error = await p.execute(() => ++calls).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).not.toBeInstanceOf(BrokenCircuitError);
    expect(calls).toBe(1);
    expect(breaker.state).toBe('closed');
  });
});
