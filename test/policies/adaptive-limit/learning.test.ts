/**
 * What the adaptive limit learns from (C workers of 20 ms; runs in test/support/adaptive-runs.ts,
 * seeded): a start above capacity, drops, a capacity that grows tenfold, a steady load under
 * capacity, and a dependency that gets slower by itself.
 */
import { describe, expect, it } from 'vitest';
import {
  baselineShiftRun,
  coldStartRun,
  dropsRun,
  rampUpRun,
  steadyRun,
} from '../../support/adaptive-runs.js';

describe('a cold start above capacity: C = 10, initial limit 20, 60 clients', () => {
  it('probes down to the knee instead of taking the queued latency for the baseline', async () => {
    const run = await coldStartRun();
    // Halves while the latency falls with the calls in flight (a queue at the dependency),
    // then gives back the last cut, which did not lower it.
    expect(run.changes.slice(0, 3).map((c) => [c.from, c.to, c.reason, c.window])).toEqual([
      [20, 10, 'probe', 1],
      [10, 5, 'probe', 2],
      [5, 10, 'probe', 3],
    ]);
    expect(run.changes.slice(3).every((c) => c.reason !== 'probe')).toBe(true);
    // Learned: the limit stays within [C, 1.3 x C], the baseline within 15 % of the 20 ms
    // service. Taking the first window's latency (about 40 ms) for the baseline, it stayed
    // between 2 and 2.5 x C, every call queueing at the dependency.
    const late = run.series.slice(20);
    expect(late.every((s) => s.limit >= 10 && s.limit <= 13)).toBe(true);
    expect(late.every((s) => s.baselineLatency >= 20 && s.baselineLatency <= 23)).toBe(true);
  }, 60_000);
});

describe('drops: every call times out at 5 s', () => {
  it('reaches the minimum within 10 windows, every change a cut for drops', async () => {
    const run = await dropsRun();
    const atMin = run.changes.find((c) => c.to === 1)!;
    expect(atMin).toBeDefined();
    expect(atMin.window).toBeLessThanOrEqual(10);
    // 20 -> 10 -> 5 -> 2 -> 1: halved each time every call of a window is dropped.
    expect(run.changes.map((c) => [c.to, c.reason, c.window])).toEqual([
      [10, 'drop', 1],
      [5, 'drop', 2],
      [2, 'drop', 3],
      [1, 'drop', 4],
    ]);
    expect(run.limit.stats().samples.answered).toBe(0);
  }, 60_000);
});

describe('ramp-up: C goes from 50 to 500 at 60 s', () => {
  it('reaches 400 within 30 s, growing a tenth a window, and settles near the new C', async () => {
    const run = await rampUpRun();
    expect(run.series[59]!.limit).toBe(57);
    const reached = run.series.findIndex((s) => s.second >= 60 && s.limit >= 400);
    expect(reached - 60).toBeLessThanOrEqual(30);
    expect(reached).toBe(81);
    expect(run.series.at(-1)!.limit).toBeGreaterThanOrEqual(500);
    expect(run.series.at(-1)!.limit).toBeLessThanOrEqual(650);
  }, 120_000);
});

describe('0.7 × C for 600 s', () => {
  it('refuses nothing once it learned from its initial 20: no probe ever pins the concurrency', async () => {
    const run = await steadyRun();
    const refused = (from: number) => run.series.slice(from).reduce((a, s) => a + s.refused, 0);
    expect(refused(30)).toBe(0);
    // The first seconds: a window at 10 (the probe of a first window with the limit full), then
    // from 20 up past the load.
    expect(refused(0)).toBe(5_721);
    expect(run.series.slice(12).every((s) => s.refused === 0)).toBe(true);
    expect(run.series[11]!.refused).toBeGreaterThan(0);
    // The baseline is refreshed all along (it follows the latency, within 5 %).
    const late = run.series.slice(60);
    expect(late.every((s) => Math.abs(s.baselineLatency - 20) < 1)).toBe(true);
    expect(new Set(late.map((s) => s.baselineLatency)).size).toBeGreaterThan(100);
  }, 120_000);
});

describe('the dependency gets 50 % slower by itself under 0.5 × C', () => {
  it('the baseline follows within 30 s, and nothing is refused', async () => {
    const run = await baselineShiftRun();
    expect(run.series.slice(30).reduce((a, s) => a + s.refused, 0)).toBe(0);
    expect(run.series[299]!.baselineLatency).toBeLessThan(21);
    const followed = run.series.findIndex((s) => s.second >= 300 && s.baselineLatency > 27);
    expect(followed - 300).toBeLessThanOrEqual(30);
    expect(run.series.at(-1)!.baselineLatency).toBeGreaterThan(28.5);
  }, 120_000);
});
