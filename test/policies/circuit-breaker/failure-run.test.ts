import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  OptionsError,
  Registry,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { fail, run, succeed, watchedBreaker } from '../../support/breaker.js';
import { seededRandom } from '../../support/random.js';

/**
 * 200 calls/s on a 5 s time window: 5 s of successes, then every call fails. Returns the ms
 * from the first failure to the first refused call.
 */
function outageDetection(options: CircuitBreakerOptions): number {
  const { clock, p, breaker } = watchedBreaker({
    window: { kind: 'time', duration: 5_000, buckets: 10, minimumCalls: 100 },
    ...options,
  });
  for (let i = 0; i < 1_000; i++) {
    succeed(p);
    clock.advance(5);
  }
  const start = clock.now();
  while (clock.now() - start < 10_000) {
    if (breaker.state === 'open') return clock.now() - start;
    fail(p);
    clock.advance(5);
  }
  throw new Error('the breaker never opened');
}

describe('circuit breaker: a run of failures on a rate window (consecutiveFailures)', () => {
  it('refuses within 100 ms when a dependency that answered 200 calls/s fails every call (run of 20)', () => {
    expect(outageDetection({ consecutiveFailures: 20 })).toBe(100);
  });

  it('without it, the same outage needs seconds of failures to outweigh the old successes', () => {
    // Half of the 5 s window must be failures: 2.5 s at 200 calls/s.
    expect(outageDetection({})).toBe(2_500);
  });

  it('opens with reason consecutive-failures, before the window holds minimumCalls', () => {
    const { p, breaker, events } = watchedBreaker({
      window: { kind: 'count', size: 100 },
      consecutiveFailures: 5,
    });
    fail(p, 4);
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
    expect(events.map((e) => [e.to, e.reason])).toEqual([['open', 'consecutive-failures']]);
  });

  it('a success ends the run', () => {
    const { p, breaker } = watchedBreaker({
      window: { kind: 'count', size: 100 },
      consecutiveFailures: 5,
    });
    run(p, 'FFFFSFFFFSFFFF');
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
  });

  it('scattered failures below the rate threshold never trip a run of 20 (20,000 calls, 20 % failing)', () => {
    const random = seededRandom(7);
    const { p, breaker, events } = watchedBreaker({
      window: { kind: 'count', size: 100 },
      consecutiveFailures: 20,
    });
    let failures = 0;
    for (let i = 0; i < 20_000; i++) {
      if (random() < 0.2) {
        failures++;
        fail(p);
      } else {
        succeed(p);
      }
    }
    expect(failures).toBeGreaterThan(3_800);
    expect(events).toEqual([]);
    expect(breaker.state).toBe('closed');
  });

  it('can be turned on by reconfigure, keeping the outcomes held', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, window: { kind: 'count', size: 100 } });
    breaker.reconfigure({ clock, window: { kind: 'count', size: 100 }, consecutiveFailures: 3 });
    for (let i = 0; i < 3; i++) {
      expect(() =>
        breaker.executeSync(() => {
          throw new Error('down');
        }),
      ).toThrow('down');
    }
    expect(breaker.state).toBe('open');
  });

  it.each([0, -1, 1.5, 1_000_001, '20', Number.NaN])(
    'refuses consecutiveFailures %s with an OptionsError naming the field and range',
    (value) => {
      let error: unknown;
      try {
        new CircuitBreaker({ consecutiveFailures: value as number });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as Error).message).toMatch(/consecutiveFailures/);
      expect((error as Error).message).toMatch(/\[1, 1000000\]/);
    },
  );

  it('refuses it on a consecutive window, whose threshold already is a run', () => {
    expect(
      () => new CircuitBreaker({ window: { kind: 'consecutive' }, consecutiveFailures: 3 }),
    ).toThrow(/consecutiveFailures.*window\.threshold/);
  });

  it('is read from registry config data', () => {
    const registry = new Registry({
      circuitBreakers: { api: { window: { kind: 'count', size: 100 }, consecutiveFailures: 2 } },
    });
    const breaker = registry.circuitBreaker('api');
    for (let i = 0; i < 2; i++) {
      expect(() =>
        breaker.executeSync(() => {
          throw new Error('down');
        }),
      ).toThrow('down');
    }
    expect(breaker.state).toBe('open');
    registry.dispose();
  });
});
