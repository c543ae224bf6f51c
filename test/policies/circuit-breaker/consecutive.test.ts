import { describe, expect, it } from 'vitest';
import type { CircuitBreakerOptions } from '../../../src/index.js';
import { run, timed, watchedBreaker } from '../../support/breaker.js';

const make = (threshold: number, options: CircuitBreakerOptions = {}) =>
  watchedBreaker({ window: { kind: 'consecutive', threshold }, breakDuration: 1000, ...options });

describe('consecutive window', () => {
  it('opens at `threshold` failures in a row, with reason consecutive-failures', () => {
    const { breaker, p, events } = make(3);
    run(p, 'FF');
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      from: 'closed',
      to: 'open',
      reason: 'consecutive-failures',
      callsInWindow: 3, // the failures in a row: a consecutive window has no rate
      failureRate: Number.NaN,
      breakDuration: 1000,
    });
  });

  it('a success resets the run of failures', () => {
    const { breaker, p } = make(3);
    run(p, 'FFSFFSFF');
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().failuresInWindow).toBe(2);
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('threshold 1 opens on the first failure', () => {
    const { breaker, p } = make(1);
    run(p, 'SSS');
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('failures spread over any time still count as in a row', () => {
    const { clock, breaker, p } = make(2);
    run(p, 'F');
    clock.advance(24 * 3600 * 1000);
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('after the breaker closes again, a whole new run is needed', () => {
    const { clock, breaker, p } = make(2);
    run(p, 'FF');
    clock.advance(1000);
    run(p, 'S'); // the probe closes it
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().failuresInWindow).toBe(0);
    run(p, 'F');
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });
});

describe('consecutive window with slow calls', () => {
  it('opens at `threshold` slow calls in a row, with reason consecutive-slow-calls', async () => {
    const { clock, breaker, p, events } = make(3, { slowCallDuration: 100 });
    await timed(p, clock, 100);
    await timed(p, clock, 150);
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().slowCallsInWindow).toBe(2);
    await timed(p, clock, 100);
    expect(breaker.state).toBe('open');
    expect(events[0]).toMatchObject({
      reason: 'consecutive-slow-calls',
      callsInWindow: 3,
      slowCallRate: Number.NaN,
      failureRate: Number.NaN,
    });
  });

  it('a call faster than slowCallDuration resets the run of slow calls', async () => {
    const { clock, breaker, p } = make(2, { slowCallDuration: 100 });
    await timed(p, clock, 100);
    await timed(p, clock, 99);
    await timed(p, clock, 100);
    expect(breaker.state).toBe('closed');
    await timed(p, clock, 100);
    expect(breaker.state).toBe('open');
  });

  it('a fast failure ends a run of slow calls but extends a run of failures', async () => {
    const { clock, breaker, p } = make(2, { slowCallDuration: 100 });
    await timed(p, clock, 100);
    await timed(p, clock, 10, false);
    expect(breaker.stats()).toMatchObject({ failuresInWindow: 1, slowCallsInWindow: 0 });
    expect(breaker.state).toBe('closed');
    await timed(p, clock, 10, false);
    expect(breaker.state).toBe('open');
  });

  it('a slow failure counts toward both runs; failures are reported first', async () => {
    const { clock, breaker, p, events } = make(2, { slowCallDuration: 100 });
    await timed(p, clock, 200, false);
    await timed(p, clock, 200, false);
    expect(breaker.state).toBe('open');
    expect(events[0]?.reason).toBe('consecutive-failures');
  });

  it('slow successes in a row do not open it when slow-call tracking is off', async () => {
    const { clock, breaker, p } = make(2);
    await timed(p, clock, 60_000);
    await timed(p, clock, 60_000);
    await timed(p, clock, 60_000);
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().slowCallsInWindow).toBe(0);
  });

  it('a promise returned through executeSync is timed like one through execute', async () => {
    const { clock, breaker, p } = make(1, { slowCallDuration: 100 });
    const slow = p.executeSync(
      () => new Promise((resolve) => clock.setTimer(() => resolve('ok'), 200)),
    ) as Promise<unknown>;
    clock.advance(200);
    await expect(slow).resolves.toBe('ok');
    expect(breaker.state).toBe('open');
  });
});
