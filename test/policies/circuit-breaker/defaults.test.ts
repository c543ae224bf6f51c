import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreakerDefaults,
  pipeline,
} from '../../../src/index.js';
import { fail, succeed, timed, watchedBreaker } from '../../support/breaker.js';

const succeeds = (): string => 'ok';

describe('circuitBreakerDefaults', () => {
  it('exports the documented defaults, frozen', () => {
    expect(circuitBreakerDefaults).toEqual({
      name: 'circuitBreaker',
      consecutiveThreshold: 5,
      countSize: 100,
      timeDuration: 30_000,
      timeBuckets: 10,
      timeMinimumCalls: 100,
      failureRateThreshold: 0.5,
      slowCallRateThreshold: 1,
      breakDuration: 30_000,
      backoffMultiplier: 2,
      backoffMaxDuration: 300_000,
      probes: 1,
      maxConcurrentProbes: 1,
      successRatio: 1,
      halfOpenMaxWait: 60_000,
    });
    expect(Object.isFrozen(circuitBreakerDefaults)).toBe(true);
  });

  it('a breaker built with no options at all starts closed and lets calls through', () => {
    const breaker = new CircuitBreaker();
    expect(breaker.state).toBe('closed');
    expect(pipeline(breaker).executeSync(succeeds)).toBe('ok');
  });
});

describe('default window: count, 100 calls, minimumCalls 100', () => {
  it('99 failures keep the breaker closed; the 100th opens it', () => {
    const { breaker, p, events } = watchedBreaker();
    fail(p, 99);
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ reason: 'failure-rate', callsInWindow: 100, failureRate: 1 });
  });

  it('remembers exactly the last 100 calls: after 100 successes the 50th failure opens it', () => {
    const { breaker, p } = watchedBreaker();
    succeed(p, 100);
    fail(p, 49);
    // The window holds 51 successes and 49 failures.
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
  });

  it('a count window without minimumCalls judges only once it holds `size` calls', () => {
    const { breaker, p } = watchedBreaker({ window: { kind: 'count', size: 10 } });
    fail(p, 9);
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
  });
});

describe('default failureRateThreshold: 0.5', () => {
  it('opens at a failure rate of exactly one half', () => {
    const { breaker, p } = watchedBreaker({ window: { kind: 'count', size: 10 } });
    succeed(p, 5);
    fail(p, 5);
    expect(breaker.state).toBe('open');
  });

  it('stays closed just below one half', () => {
    const { breaker, p } = watchedBreaker({ window: { kind: 'count', size: 10 } });
    succeed(p, 6);
    fail(p, 4);
    expect(breaker.state).toBe('closed');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 10, failuresInWindow: 4 });
  });
});

describe('default consecutive threshold: 5', () => {
  it('4 failures in a row keep it closed; the 5th opens it', () => {
    const { breaker, p, events } = watchedBreaker({ window: { kind: 'consecutive' } });
    fail(p, 4);
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
    expect(events[0]?.reason).toBe('consecutive-failures');
  });
});

describe('default time window: 30000 ms, 10 buckets, minimumCalls 100', () => {
  it('99 failures keep it closed; the 100th opens it', () => {
    const { breaker, p } = watchedBreaker({ window: { kind: 'time' } });
    fail(p, 99);
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
  });

  it('calls in the first 3000 ms bucket are still counted at 29999 ms', () => {
    const { clock, breaker, p } = watchedBreaker({ window: { kind: 'time' } });
    clock.advance(2999);
    fail(p, 50);
    clock.advance(27_000); // t = 29999
    fail(p, 50);
    expect(breaker.state).toBe('open');
  });

  it('calls in the first 3000 ms bucket expire together at 30000 ms', () => {
    const { clock, breaker, p } = watchedBreaker({ window: { kind: 'time' } });
    clock.advance(2999);
    fail(p, 50);
    clock.advance(27_001); // t = 30000
    fail(p, 50);
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().callsInWindow).toBe(50);
  });

  it('calls made at 3000 ms belong to the second bucket and last until 33000 ms', () => {
    const { clock, breaker, p } = watchedBreaker({ window: { kind: 'time' } });
    clock.advance(3000);
    fail(p, 50);
    clock.advance(29_999); // t = 32999
    fail(p, 50);
    expect(breaker.state).toBe('open');
  });
});

describe('default breakDuration: 30000 ms', () => {
  it('is still open at 29999 ms and half-open at 30000 ms', () => {
    const { clock, breaker, events } = watchedBreaker();
    breaker.trip();
    expect(events[0]?.breakDuration).toBe(30_000);
    clock.advance(29_999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });
});

describe('default halfOpen.maxWait: 60000 ms', () => {
  it('a hanging probe keeps it half-open until 60000 ms after half-open began', async () => {
    const { clock, breaker, p, events } = watchedBreaker({ breakDuration: 1000 });
    breaker.trip();
    clock.advance(1000);
    const probe = p.execute(() => new Promise(() => {}));
    void probe;
    clock.advance(59_999);
    expect(breaker.state).toBe('half-open');
    clock.advance(1);
    expect(breaker.state).toBe('open');
    expect(events.at(-1)).toMatchObject({
      from: 'half-open',
      to: 'open',
      reason: 'half-open-timeout',
    });
  });
});

describe('default half-open admission: 1 probe, 1 at a time, all must succeed', () => {
  it('admits one probe and refuses the next call while it runs', async () => {
    const { clock, breaker, p } = watchedBreaker({ breakDuration: 1000 });
    breaker.trip();
    clock.advance(1000);
    let release!: (v: string) => void;
    const probe = p.execute(() => new Promise<string>((resolve) => (release = resolve)));
    await expect(p.execute(succeeds)).rejects.toBeInstanceOf(BrokenCircuitError);
    release('ok');
    await expect(probe).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
  });

  it('with 2 probes it still runs only one at a time (maxConcurrent defaults to 1)', async () => {
    const { clock, breaker, p } = watchedBreaker({ breakDuration: 1000, halfOpen: { probes: 2 } });
    breaker.trip();
    clock.advance(1000);
    let release!: (v: string) => void;
    const first = p.execute(() => new Promise<string>((resolve) => (release = resolve)));
    await expect(p.execute(succeeds)).rejects.toBeInstanceOf(BrokenCircuitError);
    release('ok');
    await first;
    expect(breaker.state).toBe('half-open');
    succeed(p);
    expect(breaker.state).toBe('closed');
  });

  it('with 2 probes, one failed probe re-opens it (successRatio defaults to 1)', () => {
    const { clock, breaker, p, events } = watchedBreaker({
      breakDuration: 1000,
      halfOpen: { probes: 2 },
    });
    breaker.trip();
    clock.advance(1000);
    succeed(p);
    expect(breaker.state).toBe('half-open');
    fail(p);
    expect(breaker.state).toBe('open');
    expect(events.at(-1)?.reason).toBe('probes-failed');
  });
});

describe('default break backoff', () => {
  /** Opens, waits out the break, fails the probe: returns each opening's break duration. */
  function openings(options: CircuitBreakerOptions, n: number): number[] {
    const { clock, breaker, p, events } = watchedBreaker(options);
    breaker.trip();
    for (let i = 1; i < n; i++) {
      clock.advance(events.at(-1)!.breakDuration);
      expect(breaker.state).toBe('half-open');
      fail(p);
    }
    return events.filter((e) => e.to === 'open').map((e) => e.breakDuration);
  }

  it('is off when unset: every opening lasts breakDuration', () => {
    expect(openings({ breakDuration: 1000 }, 4)).toEqual([1000, 1000, 1000, 1000]);
  });

  it('breakBackoff: {} doubles each opening up to 300000 ms', () => {
    expect(openings({ breakBackoff: {} }, 6)).toEqual([
      30_000, 60_000, 120_000, 240_000, 300_000, 300_000,
    ]);
  });

  it('maxDuration defaults to breakDuration when that is longer than 300000 ms', () => {
    expect(openings({ breakDuration: 400_000, breakBackoff: {} }, 3)).toEqual([
      400_000, 400_000, 400_000,
    ]);
  });
});

describe('default slow-call settings', () => {
  it('slow-call tracking is off when slowCallDuration is unset: a ten-minute call is not slow', async () => {
    const { clock, breaker, p } = watchedBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    const seen: boolean[] = [];
    breaker.onSuccess((e) => seen.push(e.slow));
    await timed(p, clock, 600_000);
    expect(breaker.state).toBe('closed');
    expect(seen).toEqual([false]);
    expect(breaker.needsDuration).toBe(false);
  });

  it('slowCallRateThreshold defaults to 1: 3 slow calls of 4 keep it closed, 4 of 4 open it', async () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'count', size: 4 },
      slowCallDuration: 100,
    };
    const a = watchedBreaker(options);
    await timed(a.p, a.clock, 100);
    await timed(a.p, a.clock, 100);
    await timed(a.p, a.clock, 100);
    await timed(a.p, a.clock, 99);
    expect(a.breaker.state).toBe('closed');
    const b = watchedBreaker(options);
    for (let i = 0; i < 4; i++) await timed(b.p, b.clock, 100);
    expect(b.breaker.state).toBe('open');
    expect(b.events[0]).toMatchObject({ reason: 'slow-call-rate', slowCallRate: 1 });
  });
});

describe('default predicates', () => {
  it('every error counts as a failure, including non-Error values', () => {
    const { breaker, p } = watchedBreaker({ window: { kind: 'consecutive', threshold: 3 } });
    expect(() =>
      p.executeSync(() => {
        throw 'a string';
      }),
    ).toThrow('a string');
    expect(() =>
      p.executeSync(() => {
        throw undefined;
      }),
    ).toThrow();
    fail(p);
    expect(breaker.state).toBe('open');
    expect(breaker.stats().failures).toBe(3);
  });

  it('no result counts as a failure', () => {
    const { breaker, p } = watchedBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    for (const value of [undefined, null, false, 0, '', { status: 503 }, new Error('value')]) {
      expect(p.executeSync(() => value)).toBe(value);
    }
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().successes).toBe(7);
  });
});

describe('default name, debug and clock', () => {
  it('names itself "circuitBreaker" in its errors', async () => {
    const { breaker, p } = watchedBreaker();
    breaker.trip();
    const error = await p.execute(succeeds).catch((e: unknown) => e);
    expect(error).toMatchObject({
      policy: 'circuitBreaker',
      policyName: 'circuitBreaker',
      message: 'Circuit breaker "circuitBreaker" is open',
    });
    expect(breaker.name).toBe('circuitBreaker');
  });

  it('is not in debug mode: refusals reuse one stackless error', async () => {
    const { breaker, p } = watchedBreaker();
    breaker.trip();
    const a = await p.execute(succeeds).catch((e: unknown) => e);
    const b = await p.execute(succeeds).catch((e: unknown) => e);
    expect(a).toBe(b);
    expect((a as Error).stack).not.toMatch(/\n\s+at /);
  });

  it('reads the system clock when none is given', async () => {
    const breaker = new CircuitBreaker({ breakDuration: 60_000 });
    const before = Date.now();
    breaker.trip();
    const error = (await pipeline(breaker)
      .execute(succeeds)
      .catch((e: unknown) => e)) as BrokenCircuitError;
    // retryAfter is read from the system clock; allow for the time the test itself takes.
    expect(error.retryAfter).toBeLessThanOrEqual(60_000);
    expect(error.retryAfter).toBeGreaterThan(60_000 - (Date.now() - before) - 1000);
    expect(breaker.state).toBe('open');
  });
});
