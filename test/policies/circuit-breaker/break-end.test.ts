/**
 * How an open breaker learns that its break is over on a clock whose readings cost something
 * (the system clock): a shared wake-up timer says so, and refused calls before it do not read
 * the clock, except every 64th.
 */
import { describe, expect, it } from 'vitest';
import { CircuitBreaker, pipeline } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

/** A manual clock that counts readings and behaves like the system clock for policies. */
class CountingClock extends ManualClock {
  reads = 0;
  constructor() {
    super(1_000);
    this.cheapNow = false;
  }
  override now(): number {
    this.reads++;
    return super.now();
  }
}

function tripped(clock: CountingClock, breakDuration = 100) {
  const breaker = new CircuitBreaker({ clock, breakDuration });
  breaker.trip();
  return { breaker, p: pipeline(breaker) };
}

describe('an open breaker on a clock that is costly to read', () => {
  it('refuses without reading the clock, except every 64th refusal', () => {
    const clock = new CountingClock();
    const { breaker, p } = tripped(clock);
    clock.reads = 0;
    for (let i = 0; i < 640; i++) {
      expect(() => p.executeSync(() => 1)).toThrow();
    }
    expect(clock.reads).toBe(10);
    expect(breaker.stats().rejections).toBe(640);
  });

  it('admits a probe as soon as the break is over: the shared timer wakes it', () => {
    const clock = new CountingClock();
    const { breaker, p } = tripped(clock);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(99);
    expect(() => p.executeSync(() => 1)).toThrow();
    clock.advance(1);
    expect(p.executeSync(() => 1)).toBe(1);
    expect(breaker.state).toBe('closed');
    expect(clock.pendingTimers).toBe(0);
  });

  it('keeps one wake-up per breaker: re-opened for longer, an early wake is pushed back', () => {
    const clock = new CountingClock();
    const { breaker, p } = tripped(clock, 100);
    breaker.reset();
    clock.advance(50);
    // Backoff is off, so this break is 100 ms again but ends 50 ms after the first one.
    breaker.trip();
    expect(clock.pendingTimers).toBe(1);
    clock.advance(50);
    // Woken for the old break: still open, nothing read on the refusals that follow.
    clock.reads = 0;
    for (let i = 0; i < 10; i++) expect(() => p.executeSync(() => 1)).toThrow();
    expect(clock.reads).toBe(0);
    clock.advance(49);
    expect(() => p.executeSync(() => 1)).toThrow();
    clock.advance(1);
    expect(p.executeSync(() => 1)).toBe(1);
  });

  it('still ends its break when timers never run (a loop that never yields), within 64 refusals', () => {
    let now = 0;
    const clock = { now: () => now, setTimer: () => 0, clearTimer: () => {} };
    const breaker = new CircuitBreaker({ clock, breakDuration: 100 });
    breaker.trip();
    const p = pipeline(breaker);
    now = 100;
    let refused = 0;
    // Bounded, so a breaker that never notices fails the test instead of hanging it.
    for (; refused < 1_000; refused++) {
      try {
        p.executeSync(() => 1);
        break;
      } catch {}
    }
    expect(refused).toBeLessThan(64);
    expect(breaker.state).toBe('closed');
  });

  it('a manual clock keeps its default: breakers read it and make no timer', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, breakDuration: 100 });
    breaker.trip();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(100);
    expect(pipeline(breaker).executeSync(() => 1)).toBe(1);
  });

  it('restored open from a snapshot, it waits for the rest of the break the same way', () => {
    const clock = new CountingClock();
    const { breaker } = tripped(clock, 100);
    clock.advance(40);
    const restored = new CircuitBreaker({
      clock,
      breakDuration: 100,
      initialState: breaker.toJSON(),
    });
    const p = pipeline(restored);
    clock.advance(59);
    clock.reads = 0;
    expect(() => p.executeSync(() => 1)).toThrow();
    expect(clock.reads).toBe(0);
    clock.advance(1);
    expect(p.executeSync(() => 1)).toBe(1);
  });
});
