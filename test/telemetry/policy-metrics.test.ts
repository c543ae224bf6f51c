import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  fallback,
  OptionsError,
  pipeline,
  RateLimiter,
  Retry,
  Timeout,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { untilAborted } from '../support/async.js';

const boom = new Error('boom');

/** A call that takes `ms` on the manual clock, then succeeds or fails. */
function takes(clock: ManualClock, ms: number, ok = true) {
  return () => {
    clock.advance(ms);
    if (!ok) throw boom;
    return 'ok';
  };
}

describe('circuit breaker metrics', () => {
  it('counts successes, failures, ignored calls, rejections by state and transitions by state entered', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 2 },
      breakDuration: 1_000,
      halfOpen: { probes: 2, maxConcurrent: 1 },
    });
    const p = pipeline(breaker);
    p.executeSync(() => 1);
    for (let i = 0; i < 2; i++) expect(() => p.executeSync(takes(clock, 0, false))).toThrow(boom);
    // Open: three refusals.
    for (let i = 0; i < 3; i++) expect((await p.tryExecute(() => 1)).ok).toBe(false);
    clock.advance(1_000);
    // Half-open with one probe in flight: the next call is refused by the half-open state.
    let release!: () => void;
    const probe = p.execute(() => new Promise<void>((r) => (release = r)));
    expect((await p.tryExecute(() => 1)).ok).toBe(false);
    release();
    await probe;
    p.executeSync(() => 1);
    expect(breaker.state).toBe('closed');
    breaker.forceOpen();
    expect((await p.tryExecute(() => 1)).ok).toBe(false);
    const controller = new AbortController();
    breaker.reset();
    const aborted = p.execute(untilAborted, { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');

    const s = breaker.stats();
    expect(s).toMatchObject({
      successes: 3,
      failures: 2,
      rejections: 5,
      rejectionsByReason: { open: 3, halfOpen: 1, forcedOpen: 1 },
      transitions: 5,
      transitionsTo: {
        open: 1,
        'half-open': 1,
        closed: 2,
        'forced-open': 1,
        disabled: 0,
        'metrics-only': 0,
      },
    });
    expect(s.ignored).toBe(1);
    expect(s.latency).toBeUndefined();
  });

  it('reads the time in the current state from its clock', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, breakDuration: 10_000 });
    clock.advance(250);
    expect(breaker.stats().timeInState).toBe(250);
    breaker.trip();
    clock.advance(40);
    expect(breaker.stats().timeInState).toBe(40);
  });

  it('keeps a latency histogram of admitted calls with metrics.latency on, every call timed on a manual clock', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, metrics: { latency: true } });
    const p = pipeline(breaker);
    for (let i = 1; i <= 100; i++) p.executeSync(takes(clock, i));
    for (let i = 0; i < 10; i++) {
      await p.execute(async () => {
        clock.advance(1_000);
        await flushMicrotasks();
      });
    }
    expect(() => p.executeSync(takes(clock, 7, false))).toThrow(boom);
    const latency = breaker.stats().latency!;
    expect(latency.count).toBe(111);
    expect(latency.min).toBe(1);
    expect(latency.max).toBe(1_000);
    expect(latency.sum).toBe(5_050 + 10_000 + 7);
    // Order statistics of 1..100, 7 and ten times 1000 (111 values): within a bucket (1/32).
    const within = (got: number, exact: number) =>
      expect(Math.abs(got - exact)).toBeLessThanOrEqual(exact / 32);
    within(latency.p50, 55);
    within(latency.p90, 99);
    within(latency.p99, 1_000);
  });

  it('reads the recent latency in stats from its clock: after slow calls then fast ones, the recent p99 drops back, the lifetime one does not', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, metrics: { latency: 1 } });
    const bulkhead = new Bulkhead({ clock, maxConcurrent: 10, metrics: { latency: 1 } });
    const p = pipeline(breaker, bulkhead);
    // Read every second, as a dashboard does: 30 s of 3 s calls, then 90 s of 10 ms ones.
    for (let s = 0; s < 120; s++) {
      p.executeSync(takes(clock, s < 30 ? 3_000 : 10));
      clock.advance(1_000);
      if (s === 29) {
        expect(breaker.stats().latency!.recent!.p99).toBeGreaterThan(2_900);
        expect(bulkhead.stats().latency!.recent!.p99).toBeGreaterThan(2_900);
      }
      breaker.stats();
      bulkhead.stats();
    }
    for (const { latency } of [breaker.stats(), bulkhead.stats()]) {
      expect(latency!.p99).toBeGreaterThan(2_900);
      expect(latency!.count).toBe(120);
      expect(latency!.recent!.p99).toBeLessThan(10.5);
      expect(latency!.recent!.window).toBeGreaterThanOrEqual(60_000);
    }
  });

  it('times the rejections, throws and thenables of a breaker alone, and no refused call', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 3 },
      metrics: { latency: true },
    });
    const p = pipeline(breaker);
    await expect(
      p.execute(async () => {
        clock.advance(5);
        await flushMicrotasks();
        throw boom;
      }),
    ).rejects.toBe(boom);
    await expect(p.execute(takes(clock, 6, false))).rejects.toBe(boom);
    const thenable = {
      // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a promise is the point.
      then(resolve: (value: string) => void) {
        clock.advance(7);
        resolve('later');
      },
    };
    await expect(p.execute(() => thenable as PromiseLike<string>)).resolves.toBe('later');
    await expect(p.execute(takes(clock, 8))).resolves.toBe('ok');
    expect(breaker.stats()).toMatchObject({ successes: 2, failures: 2, failuresInWindow: 0 });
    breaker.trip();
    await expect(p.execute(takes(clock, 9))).rejects.toThrow(/open/);
    expect(breaker.stats().latency).toMatchObject({ count: 4, min: 5, max: 8, sum: 26 });
  });

  it('rejects a bad metrics option at construction, naming the field and the range', () => {
    expect(() => new CircuitBreaker({ metrics: { latency: 0 } })).toThrow(OptionsError);
    expect(() => new CircuitBreaker({ metrics: { latency: 0 } })).toThrow(
      /metrics\.latency.*\[1, 1048576\]/,
    );
    expect(() => new Bulkhead({ metrics: 'on' as never })).toThrow(/metrics/);
    expect(() => new CircuitBreaker({ metrics: { latncy: true } as never })).toThrow(
      /did you mean `latency`/,
    );
  });

  it('keeps its metrics settings across reconfigure when left out, and refuses to change them', () => {
    const breaker = new CircuitBreaker({ metrics: { latency: 4 } });
    breaker.reconfigure({ breakDuration: 5_000 });
    expect(breaker.latencyEvery).toBe(4);
    expect(() => breaker.reconfigure({ metrics: false })).toThrow(
      /metrics are set when a policy is built/,
    );
    const bulkhead = new Bulkhead({ maxConcurrent: 2 });
    expect(() => bulkhead.reconfigure({ maxConcurrent: 3, metrics: { latency: true } })).toThrow(
      OptionsError,
    );
    expect(bulkhead.maxConcurrent).toBe(2);
  });
});

describe('latency sampling', () => {
  function systemLikeClock(): ManualClock {
    const clock = new ManualClock();
    clock.cheapNow = false;
    return clock;
  }

  it('times one call in n on a clock that is costly to read, on every entry point', async () => {
    const clock = systemLikeClock();
    const breaker = new CircuitBreaker({ clock, metrics: { latency: 4 } });
    const p = pipeline(breaker);
    for (let i = 0; i < 100; i++) p.executeSync(takes(clock, 2));
    expect(breaker.stats().latency!.count).toBe(25);
    for (let i = 0; i < 100; i++) await p.execute(takes(clock, 2));
    for (let i = 0; i < 100; i++) await p.tryExecute(takes(clock, 2));
    expect(breaker.stats().latency).toMatchObject({ count: 75, min: 2, max: 2 });
  });

  it('samples calls of a composed pipeline and times every call where a slow-call threshold needs it', async () => {
    const clock = systemLikeClock();
    const sampled = new Bulkhead({ clock, maxConcurrent: 5, metrics: { latency: 10 } });
    const retry = new Retry({ clock, maxAttempts: 2, delay: 1 });
    const p = pipeline(retry, sampled);
    for (let i = 0; i < 50; i++) await p.execute(takes(clock, 3));
    expect(sampled.stats().latency).toMatchObject({ count: 5, min: 3, max: 3 });

    const timed = new CircuitBreaker({ clock, slowCallDuration: 100, metrics: { latency: 16 } });
    const q = pipeline(timed);
    for (let i = 0; i < 20; i++) await q.execute(takes(clock, 1));
    expect(timed.stats().latency!.count).toBe(20);
  });

  it('reads no clock for latency when no policy keeps a histogram', async () => {
    const clock = systemLikeClock();
    let reads = 0;
    const now = clock.now.bind(clock);
    clock.now = () => {
      reads++;
      return now();
    };
    const breaker = new CircuitBreaker({ clock });
    const p = pipeline(breaker);
    const before = reads;
    for (let i = 0; i < 50; i++) await p.execute(() => 1);
    expect(reads - before).toBe(0);
  });
});

describe('other policies', () => {
  it('a bulkhead counts admissions (queued ones too) and rejections by reason', async () => {
    const clock = new ManualClock();
    const bulkhead = new Bulkhead({ clock, maxConcurrent: 1, maxQueue: 1, queueTimeout: 100 });
    const p = pipeline(bulkhead);
    let release!: () => void;
    const first = p.execute(() => new Promise<void>((r) => (release = r)));
    const queued = p.execute(() => 'second');
    expect((await p.tryExecute(() => 1)).ok).toBe(false); // full
    release();
    await first;
    await queued;
    const holder = p.execute(() => new Promise<void>((r) => (release = r)));
    const late = p.tryExecute(() => 1);
    clock.advance(100);
    expect((await late).ok).toBe(false); // queue timeout
    release();
    await holder;
    expect(bulkhead.stats()).toMatchObject({
      admitted: 3,
      rejectionsByReason: { full: 1, queueTimeout: 1 },
    });
  });

  it('a retry policy counts retries and give-ups, a timeout its timeouts, a fallback its uses', async () => {
    const clock = new ManualClock();
    const retry = new Retry({ clock, maxAttempts: 3, delay: 10, backoff: 'constant' });
    const timeout = new Timeout({ clock, timeout: 50 });
    const fb = fallback({ value: 'fallback' });
    const p = pipeline(fb, retry, timeout);
    const call = p.execute(untilAborted);
    for (let i = 0; i < 3; i++) {
      clock.advance(50);
      await flushMicrotasks();
      clock.advance(10);
      await flushMicrotasks();
    }
    expect(await call).toBe('fallback');
    expect(retry.stats()).toMatchObject({ retries: 2, gaveUp: 1 });
    expect(timeout.stats()).toEqual({ timeout: 50, timeouts: 3 });
    expect(fb.stats()).toEqual({ fallbacks: 1 });
  });

  it('a rate limiter counts what it admitted and refused', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ clock, limit: 2, period: 1_000 });
    const answers = [limiter.tryAcquire(), limiter.tryAcquire(), limiter.tryAcquire()];
    expect(answers.map((a) => a === 0)).toEqual([true, true, false]);
    expect(limiter.stats()).toMatchObject({ admitted: 2, rejected: 1 });
  });
});
