import { describe, expect, it } from 'vitest';
import {
  formatMs,
  formatSecond,
  formatSummary,
  p99,
  percentile,
  type Sample,
  secondHeader,
  type Totals,
  totals,
} from '../../demo/report.mjs';

/** 1, 2, ..., n in a shuffled order, so sorting is exercised. */
function oneTo(n: number): number[] {
  const values = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = 0; i < n; i++) {
    const j = (i * 7919) % n;
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  return values;
}

describe('p99 (nearest rank)', () => {
  it('is the 99th of 100 values and the 990th of 1000', () => {
    expect(p99(oneTo(100))).toBe(99);
    expect(p99(oneTo(1000))).toBe(990);
  });

  it('is the largest value when there are fewer than 100 values', () => {
    expect(p99(oneTo(10))).toBe(10);
    expect(p99([3, 250, 4])).toBe(250);
    expect(p99([42])).toBe(42);
  });

  it('ignores the slowest of 100 calls, but not the two slowest', () => {
    const fast = new Array<number>(98).fill(5);
    expect(p99([...fast, 5, 1500])).toBe(5);
    expect(p99([...fast, 1400, 1500])).toBe(1400);
  });

  it('is NaN for no values', () => {
    expect(p99([])).toBeNaN();
  });

  it('sorts numerically and leaves its input unchanged', () => {
    const values = [100, 9, 80];
    expect(percentile(values, 0.5)).toBe(80);
    expect(values).toEqual([100, 9, 80]);
  });

  it('gives the median of 1..10 as 5 and the maximum for q = 1', () => {
    expect(percentile(oneTo(10), 0.5)).toBe(5);
    expect(percentile(oneTo(10), 1)).toBe(10);
  });
});

describe('totals', () => {
  const samples: Sample[] = [
    { t: 999.9, latency: 7, outcome: 'ok' },
    { t: 1000, latency: 5, outcome: 'ok' },
    { t: 1200, latency: 300, outcome: 'failed' },
    { t: 1500, latency: 0.2, outcome: 'rejected' },
    { t: 1999.9, latency: 0.1, outcome: 'rejected' },
    { t: 2000, latency: 1500, outcome: 'ok' },
  ];
  const arrivals = [10, 999, 1000, 1001, 1999, 2000];

  it('counts the calls that finished in [from, to) by outcome', () => {
    expect(totals(samples, arrivals, 1000, 2000)).toEqual({
      calls: 4,
      ok: 1,
      failed: 1,
      rejected: 2,
      p99: 300,
      max: 300,
      reached: 3,
    });
  });

  it('counts everything without bounds', () => {
    const all = totals(samples, arrivals);
    expect(all).toMatchObject({ calls: 6, ok: 3, failed: 1, rejected: 2, reached: 6 });
    expect(all.max).toBe(1500);
  });

  it('gives NaN latencies and zero counts for a second without calls', () => {
    expect(totals(samples, arrivals, 5000, 6000)).toEqual({
      calls: 0,
      ok: 0,
      failed: 0,
      rejected: 0,
      p99: Number.NaN,
      max: Number.NaN,
      reached: 0,
    });
  });
});

describe('formatMs', () => {
  it('shows one decimal below 10 ms and whole ms from 10 up', () => {
    expect(formatMs(3.14)).toBe('3.1');
    expect(formatMs(0.04)).toBe('0.0');
    expect(formatMs(9.96)).toBe('10');
    expect(formatMs(1234.5)).toBe('1235');
  });

  it('shows - for no value', () => {
    expect(formatMs(Number.NaN)).toBe('-');
  });
});

describe('per-second lines', () => {
  const second: Totals = {
    calls: 50,
    ok: 3,
    failed: 7,
    rejected: 40,
    p99: 301.4,
    max: 340,
    reached: 14,
  };

  it('formats elapsed time, phase, state, counts, p99 and requests in fixed columns', () => {
    expect(formatSecond({ second: 7, phase: 'failing', state: 'open', totals: second })).toBe(
      '   7s failing     open            3       7        40      301       14',
    );
  });

  it('lines up every column with the header', () => {
    const header = secondHeader();
    const line = formatSecond({
      second: 12,
      phase: 'recovered',
      state: 'half-open',
      totals: second,
    });
    expect(header).toBe('    t phase       breaker        ok  failed  rejected   p99 ms  reached');
    expect(line).toHaveLength(header.length);
    // Right-aligned columns end where their header ends.
    for (const label of ['ok', 'failed', 'rejected', 'p99 ms', 'reached']) {
      const end = header.indexOf(label) + label.length;
      expect(line[end - 1], label).not.toBe(' ');
      expect(line[end] ?? ' ', label).toBe(' ');
    }
  });

  it('appends the breaker transitions of that second, in order', () => {
    const line = formatSecond({
      second: 3,
      phase: 'failing',
      state: 'open',
      totals: second,
      transitions: [
        { t: 2100, from: 'closed', to: 'open' },
        { t: 2900, from: 'open', to: 'half-open' },
        { t: 2950, from: 'half-open', to: 'open' },
      ],
    });
    expect(line.endsWith('  closed->open, open->half-open, half-open->open')).toBe(true);
  });

  it('shows - as p99 of a second in which no call finished', () => {
    const empty = { ...second, calls: 0, ok: 0, failed: 0, rejected: 0, p99: Number.NaN };
    const line = formatSecond({ second: 1, phase: 'slow', state: 'closed', totals: empty });
    expect(line.split(/\s+/).slice(-2)).toEqual(['-', '14']);
  });
});

describe('summary table', () => {
  it('puts the protected run next to the unprotected one, row by row', () => {
    const guarded: Totals = {
      calls: 1000,
      ok: 560,
      failed: 30,
      rejected: 410,
      p99: 612.3,
      max: 655,
      reached: 520,
    };
    const plain: Totals = {
      calls: 1000,
      ok: 750,
      failed: 250,
      rejected: 0,
      p99: 1503.9,
      max: 1511,
      reached: 1000,
    };
    expect(formatSummary(guarded, plain)).toEqual([
      '                       protected unprotected',
      'calls                       1000        1000',
      'ok                           560         750',
      'failed                        30         250',
      'rejected fast                410           0',
      'p99 latency ms               612        1504',
      'max latency ms               655        1511',
      'reached dependency           520        1000',
    ]);
  });
});
