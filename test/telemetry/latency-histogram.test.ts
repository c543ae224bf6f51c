import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bucketBounds,
  HISTOGRAM_BUCKETS,
  LatencyHistogram,
  RECENT_WINDOW,
} from '../../src/telemetry/LatencyHistogram.js';
import { ManualClock } from '../../src/testing/index.js';

describe('LatencyHistogram', () => {
  it('lays its buckets edge to edge with a width at most 1/16 of their lower bound', () => {
    for (let i = 0; i < HISTOGRAM_BUCKETS - 1; i++) {
      const [lo, hi] = bucketBounds(i);
      expect(bucketBounds(i + 1)[0]).toBe(hi);
      expect(hi).toBeGreaterThan(lo);
      if (lo >= 16) expect((hi - lo) / lo).toBeLessThanOrEqual(1 / 16);
    }
    expect(bucketBounds(HISTOGRAM_BUCKETS - 1)[1]).toBe(2 ** 32);
  });

  it('reads count, sum, min, max and percentiles of 1..1000 ms within bucket error', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) h.record(i);
    const s = h.toJSON();
    expect(s.count).toBe(1000);
    expect(s.sum).toBe(500_500);
    expect(s.min).toBe(1);
    expect(s.max).toBe(1000);
    for (const [q, exact] of [
      [0.5, 500],
      [0.9, 900],
      [0.99, 990],
      [0.999, 999],
    ] as const) {
      expect(Math.abs(h.percentile(q) - exact) / exact).toBeLessThanOrEqual(1 / 32);
    }
  });

  it('answers any percentile of any sample within 1/32 of the exact order statistic', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.001, max: 4_000_000, noNaN: true }), {
          minLength: 1,
          maxLength: 300,
        }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (values, q) => {
          const h = new LatencyHistogram();
          for (const v of values) h.record(v);
          const sorted = [...values].sort((a, b) => a - b);
          const exact = sorted[Math.max(0, Math.ceil(q * values.length) - 1)]!;
          const got = h.percentile(q);
          // Rounding to whole µs adds at most 0.5 µs, and buckets below 16 µs are 1 µs wide.
          expect(Math.abs(got - exact)).toBeLessThanOrEqual(exact / 32 + 0.001 + 1e-9);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ignores negative and NaN durations and reads 0 when empty', () => {
    const h = new LatencyHistogram();
    h.record(-1);
    h.record(Number.NaN);
    expect(h.toJSON()).toEqual({
      count: 0,
      sum: 0,
      min: 0,
      max: 0,
      p50: 0,
      p90: 0,
      p99: 0,
      p999: 0,
    });
  });

  it('reads a percentile within 1/16 of the value from 16 µs to 71 minutes, the range its docs state, and not below it', () => {
    const within = (ms: number, count = 2) => {
      const h = new LatencyHistogram();
      // Two values either side of ms, so the percentile falls inside a bucket, not on a max.
      for (let i = 0; i < count; i++) h.record(ms);
      h.record(ms * 0.5);
      h.record(ms * 2);
      return Math.abs(h.percentile(0.5) - ms) / ms <= 1 / 16;
    };
    fc.assert(
      fc.property(fc.double({ min: 0.016, max: 4_294_967, noNaN: true }), (ms) => within(ms)),
    );
    // Below 16 µs durations are whole microseconds: 1.5 µs reads as 2.
    expect(within(0.0015)).toBe(false);
  });

  it('clamps durations past 71 minutes into its last bucket', () => {
    const h = new LatencyHistogram();
    h.record(10 * 3_600_000);
    expect(h.counts[HISTOGRAM_BUCKETS - 1]).toBe(1);
    expect(h.percentile(0.5)).toBe(10 * 3_600_000);
  });

  it('counts durations at or below Prometheus-style bounds, exact to one fine bucket', () => {
    const h = new LatencyHistogram();
    for (const v of [0.5, 1, 2, 4.9, 5, 20, 100, 2000]) h.record(v);
    expect(h.cumulativeAt([1, 5, 10, 100, 1000, 10_000])).toEqual([2, 5, 5, 7, 7, 8]);
  });

  it('adds another histogram bucket by bucket', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    a.record(1);
    b.record(3);
    b.record(0.2);
    a.add(b);
    expect(a.count).toBe(3);
    expect(a.min).toBe(0.2);
    expect(a.max).toBe(3);
    expect(a.cumulativeAt([0.5, 1, 3])).toEqual([1, 2, 3]);
  });
});

describe('LatencyHistogram recent percentiles', () => {
  it('after a burst of slow calls followed by fast ones, the recent p99 drops back while the lifetime one does not', () => {
    const clock = new ManualClock();
    const h = new LatencyHistogram();
    const read = () => h.snapshot(clock.now());
    // A dashboard reads every second: 2 minutes of 5 ms calls, a 30 s outage of 2 s calls,
    // then 2 minutes of 5 ms calls again.
    const second = (ms: number) => {
      for (let i = 0; i < 10; i++) h.record(ms);
      clock.advance(1_000);
      return read();
    };
    for (let s = 0; s < 120; s++) second(5);
    expect(read().recent!.p99).toBeCloseTo(5, 0);
    let during = read();
    for (let s = 0; s < 30; s++) during = second(2_000);
    expect(during.recent!.p99).toBeGreaterThan(1_900);
    expect(during.p99).toBeGreaterThan(1_900);
    let after = read();
    for (let s = 0; s < 120; s++) after = second(5);
    expect(after.recent!.p99).toBeLessThan(5.2);
    expect(after.recent!.p50).toBeLessThan(5.2);
    expect(after.p99).toBeGreaterThan(1_900);
    expect(after.count).toBe(2_700);
  });

  it('covers 60 to 75 s of calls while it is read every second', () => {
    const clock = new ManualClock();
    const h = new LatencyHistogram();
    for (let s = 1; s <= 300; s++) {
      h.record(s);
      clock.advance(1_000);
      const { recent } = h.snapshot(clock.now());
      if (s === 1) {
        expect(recent).not.toHaveProperty('window');
        expect(recent).toMatchObject({ count: 1, sum: 1 });
        continue;
      }
      const window = recent!.window!;
      if (s >= 75) {
        expect(window).toBeGreaterThanOrEqual(RECENT_WINDOW);
        expect(window).toBeLessThan(RECENT_WINDOW + 15_000);
      }
      // One call a second: the calls of the window, and the oldest of them is the shortest.
      expect(recent!.count).toBe(window / 1_000);
      expect(recent!.sum).toBe(((s + s - window / 1_000 + 1) * (window / 1_000)) / 2);
    }
  });

  it('covers every call since it was made at its first reading, and the calls since then after', () => {
    const clock = new ManualClock();
    const h = new LatencyHistogram();
    h.record(100);
    clock.advance(3_600_000);
    expect(h.snapshot(clock.now()).recent).toEqual({
      count: 1,
      sum: 100,
      p50: 100,
      p90: 100,
      p99: 100,
      p999: 100,
    });
    clock.advance(1_000);
    h.record(2);
    expect(h.snapshot(clock.now()).recent).toMatchObject({ window: 1_000, count: 1, sum: 2 });
  });

  it('covers the time since an older reading when readings are further apart than a minute', () => {
    const clock = new ManualClock();
    const h = new LatencyHistogram();
    h.snapshot(clock.now());
    clock.advance(300_000);
    h.record(7);
    h.snapshot(clock.now());
    clock.advance(300_000);
    h.record(9);
    expect(h.snapshot(clock.now()).recent).toMatchObject({ window: 300_000, count: 1, sum: 9 });
  });

  it('reads zeros for a window without calls, and keeps at most five copies of its counts', () => {
    const clock = new ManualClock();
    const h = new LatencyHistogram();
    h.record(40);
    for (let s = 0; s < 600; s++) {
      clock.advance(1_000);
      h.snapshot(clock.now());
    }
    expect(h.snapshot(clock.now()).recent).toMatchObject({ count: 0, sum: 0, p50: 0, p99: 0 });
    expect((h as unknown as { marks: unknown[] }).marks.length).toBeLessThanOrEqual(5);
    expect(h.toJSON()).not.toHaveProperty('recent');
  });
});
