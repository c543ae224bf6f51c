import { describe, expect, it } from 'vitest';
import type { CircuitBreakerOptions } from '../../../src/index.js';
import { run, timed, watchedBreaker } from '../../support/breaker.js';

const make = (
  window: { size: number; minimumCalls?: number },
  options: CircuitBreakerOptions = {},
) => watchedBreaker({ window: { kind: 'count', ...window }, breakDuration: 1000, ...options });

describe('count window', () => {
  it('judges when the window fills, even on a success', () => {
    const { breaker, p, events } = make({ size: 4 });
    run(p, 'FFS');
    expect(breaker.state).toBe('closed');
    run(p, 'S'); // 4 calls, 2 failures: 0.5
    expect(breaker.state).toBe('open');
    expect(events[0]).toMatchObject({
      reason: 'failure-rate',
      failureRate: 0.5,
      slowCallRate: 0,
      callsInWindow: 4,
    });
  });

  it('old outcomes fall out of the ring as new ones arrive', () => {
    const { breaker, p } = make({ size: 4 }, { failureRateThreshold: 0.75 });
    run(p, 'FFSS');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 4, failuresInWindow: 2 });
    run(p, 'SS'); // both failures evicted
    expect(breaker.stats()).toMatchObject({ callsInWindow: 4, failuresInWindow: 0 });
    run(p, 'FF');
    expect(breaker.state).toBe('closed');
    run(p, 'F'); // S F F F
    expect(breaker.state).toBe('open');
  });

  it('evicts in arrival order across many wraps of the ring', () => {
    const { breaker, p } = make({ size: 3 }, { failureRateThreshold: 1 });
    for (let i = 0; i < 10; i++) run(p, 'FFS');
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().failuresInWindow).toBe(2);
    run(p, 'FF'); // F S F, then S F F
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('does not judge before minimumCalls calls', () => {
    const { breaker, p } = make({ size: 10, minimumCalls: 3 });
    run(p, 'FF');
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('judges from minimumCalls on while the window is still filling', () => {
    const { breaker, p } = make({ size: 10, minimumCalls: 3 });
    run(p, 'SFS');
    expect(breaker.state).toBe('closed');
    run(p, 'F'); // 2 of 4
    expect(breaker.state).toBe('open');
    expect(breaker.stats().callsInWindow).toBe(0);
  });

  it('a success that reaches minimumCalls opens it when the rate is already over', () => {
    const { breaker, p } = make({ size: 10, minimumCalls: 3 }, { failureRateThreshold: 0.6 });
    run(p, 'FF');
    run(p, 'S'); // 2 of 3 >= 0.6
    expect(breaker.state).toBe('open');
  });

  it('a window of size 1 opens on every failure', () => {
    const { clock, breaker, p } = make({ size: 1 });
    run(p, 'SSF');
    expect(breaker.state).toBe('open');
    clock.advance(1000);
    run(p, 'S');
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('failureRateThreshold 1 opens only when every call in the window failed', () => {
    const { breaker, p } = make({ size: 4 }, { failureRateThreshold: 1 });
    run(p, 'SFFF');
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('opening empties the window', () => {
    const { clock, breaker, p } = make({ size: 4 });
    run(p, 'FFFF');
    expect(breaker.state).toBe('open');
    clock.advance(1000);
    run(p, 'S');
    expect(breaker.state).toBe('closed');
    // Three failures of three calls: not yet minimumCalls (4) calls.
    run(p, 'FFF');
    expect(breaker.state).toBe('closed');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 3, failuresInWindow: 3 });
  });
});

describe('count window with slow calls', () => {
  const slowOptions = { slowCallDuration: 100, slowCallRateThreshold: 0.5 };

  it('opens on the slow-call rate, with reason slow-call-rate', async () => {
    const { clock, breaker, p, events } = make({ size: 4 }, slowOptions);
    await timed(p, clock, 10);
    await timed(p, clock, 100);
    await timed(p, clock, 10);
    expect(breaker.state).toBe('closed');
    await timed(p, clock, 100);
    expect(breaker.state).toBe('open');
    expect(events[0]).toMatchObject({
      reason: 'slow-call-rate',
      slowCallRate: 0.5,
      failureRate: 0,
    });
  });

  it('slow calls fall out of the ring like failures', async () => {
    const { clock, breaker, p } = make({ size: 2 }, { slowCallDuration: 100 });
    await timed(p, clock, 100);
    await timed(p, clock, 10);
    await timed(p, clock, 100);
    expect(breaker.stats().slowCallsInWindow).toBe(1);
    expect(breaker.state).toBe('closed');
  });

  it('reports the failure rate first when both rates are over their thresholds', async () => {
    const { clock, breaker, p, events } = make({ size: 2 }, slowOptions);
    await timed(p, clock, 100, false);
    await timed(p, clock, 100);
    expect(breaker.state).toBe('open');
    expect(events[0]).toMatchObject({ reason: 'failure-rate', failureRate: 0.5, slowCallRate: 1 });
  });
});
