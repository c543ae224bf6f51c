/**
 * The adaptive limit finds a dependency's capacity: C = 50 workers of 20 ms (2,500 calls a
 * second), 200 closed-loop clients, initial limit 20 (runs defined in test/support/adaptive-runs.ts,
 * seeded: every figure is exact and the same on every run).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type AdaptiveRun, convergenceRun, unloadedP99 } from '../../support/adaptive-runs.js';

let run: AdaptiveRun;
let unloaded: number;

beforeAll(async () => {
  run = await convergenceRun();
  unloaded = await unloadedP99();
}, 120_000);

describe('convergence (C = 50, 200 clients, initial limit 20, 330 s)', () => {
  it('the limit is within [40, 65] by 30 s and stays there at least 95 % of the next 300 s', () => {
    const inBand = (s: { limit: number }) => s.limit >= 40 && s.limit <= 65;
    expect(inBand(run.series[30]!)).toBe(true);
    const next = run.series.slice(30, 330);
    expect(next).toHaveLength(300);
    // Seeded: it enters the band at 12 s and never leaves it.
    expect(next.filter(inBand).length / next.length).toBe(1);
    expect(run.series.findIndex(inBand)).toBe(12);
    expect(run.series.at(-1)!.limit).toBe(57);
  });

  it('probes its first baseline once (a window at half the limit), then grows a tenth of the limit a step, while the latency shows no queue', () => {
    // The first window had the limit full: half of it showed the same latency, so there was
    // no queue at the dependency, and the probe gave the half back.
    expect(run.changes.slice(0, 2).map((c) => [c.to, c.reason])).toEqual([
      [10, 'probe'],
      [20, 'probe'],
    ]);
    expect(run.changes.slice(2).map((c) => c.to)).toEqual([
      22, 24, 26, 29, 32, 35, 39, 43, 47, 52, 57,
    ]);
    expect(run.changes.slice(2).every((c) => c.reason === 'increase')).toBe(true);
  });

  it('p99 latency of the admitted calls stays within 2 × the unloaded p99', () => {
    expect(unloaded).toBeGreaterThan(80);
    expect(unloaded).toBeLessThan(105);
    const worst = Math.max(...run.series.slice(1).map((s) => s.p99));
    expect(worst).toBeLessThanOrEqual(2 * unloaded);
    // The dependency stays busy: its in-flight work is about the limit.
    expect(run.series.slice(30).every((s) => s.inFlight >= 50)).toBe(true);
  });
});
