import { describe, expect, it } from 'vitest';
import type { CircuitBreakerOptions } from '../../../src/index.js';
import { fail, succeed, watchedBreaker } from '../../support/breaker.js';

const flappy: CircuitBreakerOptions = {
  window: { kind: 'consecutive', threshold: 1 },
  breakDuration: 1_000,
  breakBackoff: { multiplier: 2, maxDuration: 60_000 },
};

/** The break duration of every opening, in order. */
const breaks = (events: { to: string; breakDuration: number }[]) =>
  events.filter((e) => e.to === 'open').map((e) => e.breakDuration);

describe('break backoff on a flapping dependency', () => {
  it('keeps growing while the dependency recovers for one probe and fails again', () => {
    const { clock, breaker, p, events } = watchedBreaker(flappy);
    fail(p);
    for (let i = 0; i < 5; i++) {
      clock.advance(events.at(-1)!.breakDuration);
      succeed(p); // the probe passes: closed
      expect(breaker.state).toBe('closed');
      fail(p); // and the next call fails again at once
    }
    expect(breaks(events)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000]);
  });

  it('steps down one level for each breakDuration it stays closed (the default decay)', () => {
    const { clock, p, events } = watchedBreaker(flappy);
    fail(p);
    for (const closedFor of [0, 0, 0, 999, 1_000, 2_500, 10_000]) {
      clock.advance(events.at(-1)!.breakDuration);
      succeed(p);
      clock.advance(closedFor);
      fail(p);
    }
    // Four opens build 8 s; 999 ms closed is not a full step; 1 s takes one step off, 2.5 s two,
    // and 10 s closed brings it back to breakDuration.
    expect(breaks(events)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 8_000, 1_000]);
  });

  it('takes the decay step from breakBackoff.decay', () => {
    const { clock, p, events } = watchedBreaker({
      ...flappy,
      breakBackoff: { multiplier: 2, maxDuration: 60_000, decay: 100 },
    });
    fail(p);
    for (const closedFor of [0, 0, 250]) {
      clock.advance(events.at(-1)!.breakDuration);
      succeed(p);
      clock.advance(closedFor);
      fail(p);
    }
    expect(breaks(events)).toEqual([1_000, 2_000, 4_000, 2_000]);
  });

  it('reset() clears the backoff at once', () => {
    const { clock, breaker, p, events } = watchedBreaker(flappy);
    fail(p);
    clock.advance(1_000);
    succeed(p);
    fail(p);
    breaker.reset();
    fail(p);
    expect(breaks(events)).toEqual([1_000, 2_000, 1_000]);
  });
});

describe('breakBackoff.decay from config data', () => {
  it('is read as a duration', async () => {
    const { Registry } = await import('../../../src/index.js');
    const registry = new Registry({
      circuitBreakers: { api: { breakDuration: '1s', breakBackoff: { decay: '250ms' } } },
    });
    expect(registry.circuitBreaker('api')).toBeDefined();
    expect(
      () => new Registry({ circuitBreakers: { api: { breakBackoff: { decay: '0ms' } } } }),
    ).toThrow(/breakBackoff\.decay/);
  });
});
