/**
 * Partitions by criticality under a batch flood, and a CoDel queue, on the queueing simulator
 * (runs in test/support/adaptive-runs.ts, seeded).
 */
import { describe, expect, it } from 'vitest';
import { codelRun, partitionsRun } from '../../support/adaptive-runs.js';
import { percentile } from '../../support/queueing.js';

describe('partitions: live 0.9 / batch 0.1, batch floods at 12 × what the dependency serves', () => {
  it('live calls succeed at least 99.9 %; with live idle, batch uses at least 90 % of the limit', async () => {
    const run = await partitionsRun();
    const live = run.totals.get('live')!;
    expect(live.started).toBeGreaterThan(60_000);
    expect(live.ok / live.started).toBeGreaterThanOrEqual(0.999);
    expect(live.failed).toBe(0);
    // While the limit learned from 20 (live alone needs about 25), some live calls were refused.
    const start = run.totals.get('live-start')!;
    expect(start.refused).toBeGreaterThan(0);
    // Batch alone, from 60 s: its calls hold the whole limit.
    const alone = run.series.slice(62, 90);
    const share = alone.reduce((a, s) => a + s.inFlight / s.limit, 0) / alone.length;
    expect(share).toBeGreaterThanOrEqual(0.9);
    expect(run.limit.stats().partitions!.sheddable!.inFlight).toBe(run.limit.inFlight);
  }, 120_000);
});

describe('a CoDel queue on the adaptive limit: 60 s at 1.5 × what C = 10 serve', () => {
  it('no admitted call waited more than 100 ms (codelInterval), and the dependency stays busy', async () => {
    const run = await codelRun();
    const { sim } = run;
    const served = sim.calls.filter((c) => c.outcome === 'ok');
    const refused = sim.calls.filter((c) => c.outcome === 'refused');
    const waits = served.map((c) => c.admitted - c.start);
    expect(Math.max(...waits)).toBeLessThanOrEqual(100);
    expect(percentile([...waits], 0.5)).toBeLessThan(50);
    expect(refused.filter((c) => c.reason !== 'codel')).toEqual([]);
    expect(served.length).toBeGreaterThan(0.95 * sim.capacityPerSecond * 60);
    expect(sim.series.slice(2).every((s) => s.inFlight > 9)).toBe(true);
  }, 60_000);
});
