import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CoarseTime } from '../../src/clock/CoarseTime.js';
import { ManualClock } from '../../src/testing/index.js';

class CountingClock extends ManualClock {
  reads = 0;
  override now(): number {
    this.reads++;
    return super.now();
  }
}

describe('CoarseTime', () => {
  it('serves a cached reading to 63 calls, then reads the clock again', () => {
    const clock = new CountingClock();
    const coarse = CoarseTime.of(clock);
    for (let i = 0; i < 640; i++) coarse.now();
    expect(clock.reads).toBe(10);
  });

  it('peek serves the cached reading without counting a use; expire makes the next read real', () => {
    const clock = new CountingClock(5);
    const coarse = CoarseTime.of(clock);
    expect(coarse.peek()).toBe(5);
    clock.advance(0.25);
    for (let i = 0; i < 640; i++) expect(coarse.peek()).toBe(5);
    expect(clock.reads).toBe(1);
    coarse.expire();
    expect(coarse.peek()).toBe(5.25);
    expect(clock.reads).toBe(2);
    // The tick still makes it stale.
    clock.advance(1);
    expect(coarse.peek()).toBe(6.25);
  });

  it('a tick makes the cache stale; a tick nobody read after stops the timer', () => {
    const clock = new CountingClock(5);
    const coarse = CoarseTime.of(clock);
    expect(coarse.now()).toBe(5);
    clock.advance(0.5);
    expect(coarse.now()).toBe(5);
    clock.advance(0.5);
    expect(coarse.now()).toBe(6);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(1);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(1);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(10);
    expect(coarse.now()).toBe(18);
  });

  it('property: a reading is never later than the clock and at most one tick earlier', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 3, noNaN: true }), fc.nat(100)), {
          maxLength: 100,
        }),
        (steps) => {
          const clock = new ManualClock();
          const coarse = CoarseTime.of(clock);
          for (const [advance, reads] of steps) {
            clock.advance(advance);
            for (let i = 0; i < reads; i++) {
              const t = coarse.now();
              expect(t).toBeLessThanOrEqual(clock.now());
              expect(clock.now() - t).toBeLessThanOrEqual(1);
            }
          }
        },
      ),
    );
  });
});
