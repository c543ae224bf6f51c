import { describe, expect, it } from 'vitest';
import { TimerHeap } from '../../../src/policies/hedge/TimerHeap.js';
import { LatencyWindow } from '../../../src/policies/shared/LatencyWindow.js';
import { ManualClock } from '../../../src/testing/index.js';
import { seededRandom } from '../../support/random.js';

/** A log-normal duration in ms (median `median`), from two uniform draws (Box-Muller). */
function logNormal(random: () => number, median: number, sigma: number): number {
  const u = 1 - random();
  const v = random();
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}

describe('LatencyWindow', () => {
  it.each([0.5, 0.9, 0.95, 0.99, 0.999])(
    'reads the %s percentile of 10^6 log-normal durations within 5 % of the exact one',
    (q) => {
      const random = seededRandom(5);
      const window = new LatencyWindow(q, 100, 1e12);
      const all = new Float64Array(1_000_000);
      for (let i = 0; i < all.length; i++) {
        all[i] = logNormal(random, 12, 0.8);
        window.record(all[i]!, 0);
      }
      all.sort();
      const exact = all[Math.ceil(q * all.length) - 1]!;
      expect(Math.abs(window.read(0) - exact) / exact).toBeLessThanOrEqual(0.05);
    },
  );

  it('reads nothing (NaN) until it holds minSamples durations', () => {
    const window = new LatencyWindow(0.95, 3, 1_000);
    window.record(10, 0);
    window.record(10, 1);
    expect(window.read(2)).toBeNaN();
    window.record(10, 2);
    expect(window.read(3)).toBe(10);
  });

  it('covers the last half-window to window: older durations are dropped', () => {
    const window = new LatencyWindow(0.5, 1, 500);
    window.record(100, 0);
    window.record(100, 400);
    expect(window.read(400)).toBe(100);
    // At 500 the first half turns into the previous one: still read.
    window.record(20, 600);
    expect(window.samples).toBe(3);
    // At 1000 the half that held the 100s is dropped.
    expect(window.read(1_000)).toBe(20);
    expect(window.samples).toBe(1);
    // Nothing recorded for a whole window: empty.
    expect(window.read(3_000)).toBeNaN();
  });
});

describe('TimerHeap', () => {
  it('fires entries in deadline order on one armed timer', () => {
    const clock = new ManualClock();
    const fired: [number, number][] = [];
    const heap = new TimerHeap<string>(
      clock,
      () => true,
      (target) => fired.push([Number(target), clock.now()]),
    );
    for (const ms of [50, 10, 30, 10, 70]) heap.add(String(ms), ms);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(100);
    expect(fired).toEqual([
      [10, 10],
      [10, 10],
      [30, 30],
      [50, 50],
      [70, 70],
    ]);
    expect(heap.length).toBe(0);
  });

  it('stays within about twice its live entries when most are released early', () => {
    const clock = new ManualClock();
    const live = new Set<number>();
    const heap = new TimerHeap<number>(
      clock,
      (_, stamp) => live.has(stamp),
      () => {},
    );
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      const stamp = heap.add(i, 60_000);
      live.add(stamp);
      // Every entry but one in a hundred stops waiting right away.
      if (i % 100 !== 0) {
        live.delete(stamp);
        heap.release(stamp);
      }
      most = Math.max(most, heap.length);
    }
    expect(live.size).toBe(100);
    expect(most).toBeLessThanOrEqual(2 * live.size + 34);
  });
});
