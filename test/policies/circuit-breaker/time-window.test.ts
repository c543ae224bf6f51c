import { describe, expect, it } from 'vitest';
import type { CircuitBreakerOptions } from '../../../src/index.js';
import { breakerOnClock, run, watchedBreaker } from '../../support/breaker.js';

const make = (
  window: { duration: number; buckets: number; minimumCalls: number },
  options: CircuitBreakerOptions = {},
) => watchedBreaker({ window: { kind: 'time', ...window }, breakDuration: 1000, ...options });

describe('time window', () => {
  // 10 buckets of 100 ms.
  const tenBy100 = { duration: 1000, buckets: 10, minimumCalls: 4 };

  it('opens when the calls of the last `duration` ms reach minimumCalls and the rate', () => {
    const { clock, breaker, p, events } = make(tenBy100);
    run(p, 'SF');
    clock.advance(500);
    run(p, 'S');
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
    expect(events[0]).toMatchObject({ reason: 'failure-rate', failureRate: 0.5, callsInWindow: 4 });
  });

  it('does not judge below minimumCalls, even at a failure rate of 1', () => {
    const { breaker, p } = make(tenBy100);
    run(p, 'FFF');
    expect(breaker.state).toBe('closed');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 3, failuresInWindow: 3 });
  });

  it('calls expire with their bucket, `duration` ms after the bucket began', () => {
    const { clock, breaker, p } = make(tenBy100);
    clock.advance(50);
    run(p, 'FFF'); // bucket [0, 100)
    clock.advance(949); // t = 999: still inside the window
    expect(breaker.stats().callsInWindow).toBe(3);
    clock.advance(1); // t = 1000: the bucket [0, 100) has left the window
    expect(breaker.stats().callsInWindow).toBe(0);
    run(p, 'F');
    expect(breaker.state).toBe('closed');
  });

  it('calls still in the window count: the 4th failure within 1000 ms opens it', () => {
    const { clock, breaker, p } = make(tenBy100);
    clock.advance(50);
    run(p, 'FFF');
    clock.advance(949);
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('expiry of old successes can leave failures that a new failure then judges', () => {
    const { clock, breaker, p } = make(tenBy100);
    run(p, 'SSSS'); // bucket 0
    clock.advance(500);
    run(p, 'FF'); // bucket 5: 2 of 6
    expect(breaker.state).toBe('closed');
    clock.advance(500); // bucket 0 expired: F F
    run(p, 'F'); // 3 of 3, below minimumCalls 4
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('a bucket reused after a full turn of the ring starts empty', () => {
    const { clock, breaker, p } = make({ duration: 300, buckets: 3, minimumCalls: 5 });
    run(p, 'FF'); // epoch 0, bucket 0
    clock.advance(300); // epoch 3, bucket 0 again
    run(p, 'S');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 1, failuresInWindow: 0 });
    clock.advance(100); // epoch 4
    run(p, 'FFF');
    clock.advance(200); // epoch 6 reuses bucket 0: the success of epoch 3 is gone
    run(p, 'F');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 4, failuresInWindow: 4 });
    expect(breaker.state).toBe('closed');
    run(p, 'F');
    expect(breaker.state).toBe('open');
  });

  it('handles bucket widths that are not whole milliseconds', () => {
    // 3 buckets of 333.33 ms.
    const { clock, breaker, p } = make({ duration: 1000, buckets: 3, minimumCalls: 1 });
    clock.advance(333);
    run(p, 'S'); // epoch 0
    clock.advance(1); // t = 334, epoch 1
    run(p, 'S');
    clock.advance(665); // t = 999: epoch 2, both still in
    expect(breaker.stats().callsInWindow).toBe(2);
    clock.advance(1); // t = 1000: epoch 3, epoch 0 gone
    expect(breaker.stats().callsInWindow).toBe(1);
  });

  it('opens on the slow-call rate over the window', async () => {
    const { clock, breaker, p, events } = make(
      { duration: 10_000, buckets: 10, minimumCalls: 2 },
      { slowCallDuration: 100, slowCallRateThreshold: 0.5 },
    );
    const fast = p.execute(() => 'ok');
    await fast;
    const slow = p.execute(
      () => new Promise((resolve) => clock.setTimer(() => resolve('ok'), 100)),
    );
    clock.advance(100);
    await slow;
    expect(breaker.state).toBe('open');
    expect(events[0]).toMatchObject({ reason: 'slow-call-rate', slowCallRate: 0.5 });
  });

  it('stats() reports only what the window holds now', () => {
    const { clock, breaker, p } = make(tenBy100);
    run(p, 'FS');
    clock.advance(300);
    run(p, 'S');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 3, failuresInWindow: 1 });
    clock.advance(800); // t = 1100: the first bucket is gone
    expect(breaker.stats()).toMatchObject({ callsInWindow: 1, failuresInWindow: 0 });
    expect(breaker.stats()).toMatchObject({ successes: 2, failures: 1 });
  });

  it('a success that brings the live window to minimumCalls is judged after expiry', () => {
    const { clock, breaker, p } = make({ duration: 300, buckets: 3, minimumCalls: 2 });
    run(p, 'SS'); // epoch 0
    clock.advance(200);
    run(p, 'F'); // epoch 2: 1 of 3
    clock.advance(200); // epoch 4: epoch 0 has expired, the live window is { F }
    run(p, 'S'); // { F, S }: 2 calls, rate 0.5
    expect(breaker.state).toBe('open');
  });

  it('reading stats() does not change whether the breaker opens', () => {
    const outcomes: string[] = [];
    for (const peek of [false, true]) {
      const { clock, breaker, p } = make({ duration: 300, buckets: 3, minimumCalls: 2 });
      run(p, 'SS');
      clock.advance(200);
      run(p, 'F');
      clock.advance(200);
      if (peek) breaker.stats();
      run(p, 'S');
      outcomes.push(breaker.state);
    }
    expect(outcomes[0]).toBe(outcomes[1]);
  });
});

describe('no timers', () => {
  it.each([
    ['consecutive', { kind: 'consecutive', threshold: 2 }],
    ['count', { kind: 'count', size: 4, minimumCalls: 2 }],
    ['time', { kind: 'time', duration: 1000, buckets: 4, minimumCalls: 2 }],
  ] as const)(
    'a %s-window breaker leaves no timer behind through a whole cycle',
    async (_, window) => {
      const { clock, breaker, p } = breakerOnClock({
        window,
        breakDuration: 100,
        slowCallDuration: 50,
        halfOpen: { maxWait: 100 },
      });
      run(p, 'FF');
      expect(breaker.state).toBe('open');
      expect(clock.pendingTimers).toBe(0);
      clock.advance(100);
      expect(breaker.state).toBe('half-open');
      const hanging = p.execute(() => new Promise(() => {}));
      void hanging;
      expect(clock.pendingTimers).toBe(0);
      clock.advance(100);
      expect(breaker.state).toBe('open');
      clock.advance(100);
      await p.execute(() => 'ok');
      expect(breaker.state).toBe('closed');
      clock.advance(5000);
      expect(breaker.stats().callsInWindow).toBe(0);
      expect(clock.pendingTimers).toBe(0);
    },
  );
});
