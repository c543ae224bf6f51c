import { describe, expect, it } from 'vitest';
import type { CircuitBreakerOptions } from '../../../src/index.js';
import { boom, fail, pending, watchedBreaker } from '../../support/breaker.js';

const make = (options: CircuitBreakerOptions = {}) =>
  watchedBreaker({
    window: { kind: 'consecutive', threshold: 1 },
    breakDuration: 1000,
    ...options,
  });

describe('generations', () => {
  it('grows by one on every transition and is reported in each event', () => {
    const { clock, breaker, p, events } = make();
    expect(breaker.generation).toBe(0);
    fail(p); // closed -> open
    clock.advance(1000);
    expect(breaker.state).toBe('half-open');
    p.executeSync(() => 'ok'); // half-open -> closed
    breaker.disable();
    breaker.metricsOnly();
    breaker.forceOpen();
    breaker.reset();
    expect(events.map((e) => e.generation)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(breaker.generation).toBe(7);
  });

  it('does not change when nothing changes state', () => {
    const { breaker, p } = make({ window: { kind: 'consecutive', threshold: 3 } });
    p.executeSync(() => 'ok');
    fail(p);
    const release = breaker.isolate();
    breaker.forceOpen(); // already forced open
    release();
    breaker.disable();
    breaker.disable();
    expect(breaker.generation).toBe(3);
  });

  it('reset() of a closed breaker starts a new generation: a call admitted before it does not land in the cleared window', async () => {
    const { breaker, p, events } = make({ window: { kind: 'consecutive', threshold: 2 } });
    fail(p);
    const early = pending(p);
    const before = breaker.generation;
    breaker.reset();
    expect(breaker.generation).toBe(before + 1);
    expect(breaker.stats().failuresInWindow).toBe(0);
    await early.fail();
    expect(breaker.stats()).toMatchObject({ failures: 2, failuresInWindow: 0 });
    fail(p); // the only failure since the reset
    expect(breaker.state).toBe('closed');
    // Closed to closed is no transition.
    expect(events).toEqual([]);
  });

  it('a call admitted before the breaker opened and ending after it re-closed changes nothing', async () => {
    const { clock, breaker, p, events } = make();
    const early = pending(p);
    fail(p); // opens
    clock.advance(1000);
    p.executeSync(() => 'ok'); // the probe closes it
    expect(breaker.state).toBe('closed');
    const before = breaker.generation;
    await early.fail(); // threshold 1: a counted failure would open it
    expect(breaker.state).toBe('closed');
    expect(breaker.generation).toBe(before);
    expect(events).toHaveLength(3);
    // The outcome is still counted in the lifetime stats, but not in the window.
    expect(breaker.stats()).toMatchObject({ failures: 2, failuresInWindow: 0, callsInWindow: 0 });
  });

  it('a call admitted while closed and ending while open neither extends nor counts', async () => {
    const { clock, breaker, p } = make({ breakBackoff: {} });
    const early = pending(p);
    fail(p);
    clock.advance(500);
    await early.fail();
    clock.advance(500);
    expect(breaker.state).toBe('half-open');
  });

  it('a call admitted while closed and ending while half-open does not count as a probe', async () => {
    const { clock, breaker, p } = make();
    const early = pending(p);
    fail(p);
    clock.advance(1000);
    expect(breaker.state).toBe('half-open');
    await early.succeed();
    expect(breaker.state).toBe('half-open');
    expect(breaker.stats().probesInFlight).toBe(0);
  });

  it('a probe of an earlier half-open period does not count in a later one', async () => {
    const { clock, breaker, p } = make({
      halfOpen: { probes: 2, maxConcurrent: 2, successRatio: 0.5 },
    });
    fail(p);
    clock.advance(1000);
    const oldProbe = pending(p);
    const failing = pending(p);
    await failing.fail(); // 1 failure, 1 success needed of 2: still half-open
    expect(breaker.state).toBe('half-open');
    breaker.trip(); // a new open period
    clock.advance(1000);
    expect(breaker.state).toBe('half-open');
    await oldProbe.succeed();
    expect(breaker.state).toBe('half-open');
  });

  it('a probe ending after the breaker was isolated and released changes nothing', async () => {
    const { clock, breaker, p } = make();
    fail(p);
    clock.advance(1000);
    const probe = pending(p);
    const release = breaker.isolate();
    release();
    expect(breaker.state).toBe('closed');
    await probe.fail();
    expect(breaker.state).toBe('closed');
  });

  it('outcomes of older generations still reach onSuccess and onFailure', async () => {
    const { clock, breaker, p } = make();
    const seen: unknown[] = [];
    breaker.onFailure((e) => seen.push(e.detail));
    const early = pending(p);
    fail(p);
    clock.advance(1000);
    await early.fail();
    expect(seen).toEqual([boom, boom]);
  });
});
