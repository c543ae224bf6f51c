import { describe, expect, it } from 'vitest';
import {
  formatMs,
  formatSecond,
  formatSeconds,
  formatSummary,
  p99,
  percentile,
  type RunFigures,
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
  const deadline = 1000;
  const samples: Sample[] = [
    { t: 999.9, latency: 7, outcome: 'ok' },
    { t: 1000, latency: 5, outcome: 'ok' },
    { t: 1200, latency: 300, outcome: 'failed' },
    { t: 1300, latency: 600, outcome: 'failed', fallback: true },
    { t: 1500, latency: 0.5, outcome: 'rejected', fallback: true },
    { t: 1600, latency: 1000, outcome: 'ok' },
    { t: 1999.9, latency: 1000.5, outcome: 'ok' },
    { t: 2000, latency: 1500, outcome: 'ok' },
  ];
  const arrivals = [10, 999, 1000, 1001, 1999, 2000];

  it('counts good answers, fallbacks, failures and late ones in [from, to) against the deadline', () => {
    expect(totals(samples, arrivals, deadline, 1000, 2000)).toEqual({
      calls: 6,
      good: 2,
      fallback: 2,
      failed: 1,
      late: 1,
      rejected: 1,
      waited: 2906,
      median: 300,
      p99: 1000.5,
      max: 1000.5,
      reached: 3,
    });
  });

  it('counts an answer at the deadline as good and anything after it as late, a fallback too', () => {
    const edge: Sample[] = [
      { t: 1, latency: 1000, outcome: 'ok' },
      { t: 2, latency: 1001, outcome: 'ok' },
      { t: 3, latency: 1001, outcome: 'rejected', fallback: true },
      { t: 4, latency: 1001, outcome: 'failed' },
    ];
    expect(totals(edge, [], deadline)).toMatchObject({ good: 1, fallback: 0, failed: 0, late: 3 });
  });

  it('counts everything without bounds', () => {
    const all = totals(samples, arrivals, deadline);
    expect(all).toMatchObject({ calls: 8, good: 3, fallback: 2, failed: 1, late: 2, reached: 6 });
    expect(all.max).toBe(1500);
    expect(all.waited).toBe(4413);
  });

  it('gives NaN waits and zero counts for a second without calls', () => {
    expect(totals(samples, arrivals, deadline, 5000, 6000)).toEqual({
      calls: 0,
      good: 0,
      fallback: 0,
      failed: 0,
      late: 0,
      rejected: 0,
      waited: 0,
      median: Number.NaN,
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
    good: 3,
    fallback: 40,
    failed: 7,
    late: 0,
    rejected: 38,
    waited: 2200,
    median: 1.2,
    p99: 301.4,
    max: 340,
    reached: 14,
  };

  it('formats elapsed time, phase, state, counts, p99 and requests in fixed columns', () => {
    expect(formatSecond({ second: 7, phase: 'failing', state: 'open', totals: second })).toBe(
      '   7s failing     open            3        40       7     0       38      301       14',
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
    expect(header).toBe(
      '    t phase       breaker      good  fallback  failed  late  refused   p99 ms  reached',
    );
    expect(line).toHaveLength(header.length);
    // Right-aligned columns end where their header ends.
    for (const label of ['good', 'fallback', 'failed', 'late', 'refused', 'p99 ms', 'reached']) {
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
    const empty = { ...second, calls: 0, good: 0, fallback: 0, failed: 0, p99: Number.NaN };
    const line = formatSecond({ second: 1, phase: 'slow', state: 'closed', totals: empty });
    expect(line.split(/\s+/).slice(-2)).toEqual(['-', '14']);
  });
});

describe('summary', () => {
  it('leads with what callers got within their deadline, how long they waited and the load, then the table', () => {
    const guarded: RunFigures = {
      calls: 1000,
      good: 560,
      fallback: 430,
      failed: 0,
      late: 10,
      rejected: 410,
      waited: 61_234,
      median: 4.44,
      p99: 612.3,
      max: 655,
      reached: 520,
      peakInFlight: 20,
    };
    const plain: RunFigures = {
      calls: 1000,
      good: 500,
      fallback: 0,
      failed: 250,
      late: 250,
      rejected: 0,
      waited: 380_050,
      median: 9.96,
      p99: 1503.9,
      max: 1511,
      reached: 1000,
      peakInFlight: 76,
    };
    expect(formatSummary({ deadline: 1000, guarded, plain })).toEqual([
      "Answered within 1000 ms (the caller's deadline): protected 990 of 1000 (560 by the dependency, 430 by the fallback), unprotected 500 of 1000.",
      'Callers waited 61.2 s in all with protection, 380.1 s without; the dependency got 520 requests, at most 20 at once, against 1000, at most 76.',
      '',
      '                                   protected unprotected',
      'calls                                   1000        1000',
      'good (answered within 1000 ms)           560         500',
      'fallback served                          430           0',
      'failed (an error in time)                  0         250',
      'too late (after 1000 ms)                  10         250',
      'waited in all, s                        61.2       380.1',
      'waited, median ms                        4.4          10',
      'waited, p99 ms                           612        1504',
      'refused without calling                  410           0',
      'requests to the dependency               520        1000',
      '  in flight there, peak                   20          76',
    ]);
  });

  it('shows total waits in seconds with one decimal', () => {
    expect(formatSeconds(61_234)).toBe('61.2');
    expect(formatSeconds(49)).toBe('0.0');
  });
});
