import { describe, expect, it } from 'vitest';
import { Bulkhead, pipeline, timeout } from '../../src/index.js';
import { percentile, Simulation } from './queueing.js';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('queueing simulator', () => {
  it('with one worker and Poisson arrivals, the wait at the dependency matches M/M/1 (ρ/(μ−λ))', async () => {
    // μ = 50/s (20 ms), λ = 25/s: ρ = 0.5, mean wait 0.5 / 25 s = 20 ms; mean in system 1.
    const sim = new Simulation({ seed: 1, workers: 1, serviceMs: 20 });
    sim.openLoop({ via: pipeline(), rate: 25 });
    await sim.run(4_000_000);
    const served = sim.calls.filter((c) => c.outcome === 'ok');
    expect(served.length).toBeGreaterThan(95_000);
    const wait = mean(served.map((c) => c.served - c.start));
    expect(Math.abs(wait - 20) / 20).toBeLessThan(0.03);
    expect(Math.abs(mean(served.map((c) => c.service)) - 20) / 20).toBeLessThan(0.02);
    expect(Math.abs(mean(sim.series.map((s) => s.inFlight)) - 1)).toBeLessThan(0.03);
  });

  it('a bulkhead of one in front of a dependency that never queues sees exactly the M/M/1 waits of the same seed', async () => {
    const atDependency = new Simulation({ seed: 2, workers: 1 });
    atDependency.openLoop({ via: pipeline(), rate: 25 });
    await atDependency.run(1_000_000);
    const sim = new Simulation({ seed: 2, workers: 1_000 });
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 1_000_000, clock: sim.clock });
    sim.openLoop({ via: pipeline(pool), rate: 25 });
    await sim.run(1_000_000);
    const waits = sim.calls.map((c) => c.admitted - c.start);
    const expected = atDependency.calls.map((c) => c.served - c.start);
    expect(waits.length).toBe(expected.length);
    for (let k = 0; k < waits.length; k++) expect(waits[k]).toBeCloseTo(expected[k]!, 6);
    expect(sim.calls.every((c) => c.outcome !== 'ok' || c.served === c.admitted)).toBe(true);
  });

  it('is exact and repeatable: one seed gives identical calls and series, another seed others', async () => {
    const runOnce = async (seed: number) => {
      let pool: Bulkhead | undefined;
      const sim: Simulation = new Simulation({
        seed,
        workers: 3,
        probes: { queued: () => pool!.queueLength },
      });
      pool = new Bulkhead({
        maxConcurrent: 3,
        maxQueue: 20,
        queueTimeout: 100,
        clock: sim.clock,
      });
      sim.openLoop({ via: pipeline(pool), rate: 120 });
      sim.closedLoop({ via: pipeline(pool), clients: 5, think: (r) => -50 * Math.log(1 - r()) });
      await sim.run(20_000);
      return { calls: sim.calls, series: sim.series };
    };
    const a = await runOnce(42);
    const b = await runOnce(42);
    const c = await runOnce(43);
    expect(a.series).toHaveLength(20);
    expect(b).toEqual(a);
    expect(c.series).not.toEqual(a.series);
  });

  it('closed-loop clients keep the dependency at its capacity: throughput C/service, N in flight', async () => {
    const sim = new Simulation({ seed: 3, workers: 4, serviceMs: 20 });
    sim.closedLoop({ via: pipeline(), clients: 8 });
    await sim.run(60_000);
    expect(sim.series.every((s) => s.inFlight === 8)).toBe(true);
    const perSecond = mean(sim.series.map((s) => s.ok));
    expect(Math.abs(perSecond - sim.capacityPerSecond) / sim.capacityPerSecond).toBeLessThan(0.02);
  });

  it('think time spaces a closed-loop client’s calls (Little: N = X · (R + Z))', async () => {
    const sim = new Simulation({ seed: 4, workers: 100, serviceMs: 20 });
    sim.closedLoop({ via: pipeline(), clients: 10, think: 80 });
    await sim.run(60_000);
    // Each cycle is 20 ms of service (mean) and 80 ms of thought: 100 calls per second.
    expect(Math.abs(mean(sim.series.map((s) => s.ok)) - 100)).toBeLessThan(3);
    expect(Math.abs(mean(sim.series.map((s) => s.inFlight)) - 2)).toBeLessThan(0.1);
  });

  it('records refusals with their reason, and library timers fire at their exact due time', async () => {
    const sim = new Simulation({ seed: 5, workers: 2 });
    const pool = new Bulkhead({
      maxConcurrent: 2,
      maxQueue: 3,
      queueTimeout: 50,
      clock: sim.clock,
    });
    sim.openLoop({ via: pipeline(pool), rate: 300 });
    await sim.run(10_000);
    const byReason = (r: string) => sim.calls.filter((c) => c.reason === r);
    expect(byReason('full').length).toBeGreaterThan(100);
    expect(byReason('queue-timeout').length).toBeGreaterThan(10);
    for (const c of byReason('queue-timeout')) {
      expect(c.outcome).toBe('refused');
      expect(c.end - c.start).toBeCloseTo(50, 9);
      expect(c.attempts).toBe(0);
    }
    for (const c of byReason('full')) expect(c.end).toBe(c.start);
    const totals = sim.totals.get('open')!;
    expect(totals.started).toBe(sim.calls.length);
    expect(totals.refused).toBe(sim.calls.filter((c) => c.outcome === 'refused').length);
    expect(totals.ok).toBe(sim.calls.filter((c) => c.outcome === 'ok').length);
    expect(totals.admitted).toBe(sim.calls.filter((c) => c.attempts > 0).length);
    expect(sim.served).toBe(sim.calls.filter((c) => !Number.isNaN(c.served)).length);
    const counted = sim.series.reduce((n, s) => n + s.refused, 0);
    expect(counted).toBe(sim.calls.filter((c) => c.outcome === 'refused' && c.end < 10_000).length);
  });

  it('a timeout in the pipeline fails calls at its deadline; an abortable dependency lets them go', async () => {
    const sim = new Simulation({ seed: 6, workers: 1, serviceMs: 20, abortable: true });
    sim.openLoop({
      via: pipeline(timeout({ timeout: 30, clock: sim.clock })),
      rate: 60,
    });
    await sim.run(30_000);
    const failed = sim.calls.filter((c) => c.outcome === 'failed');
    expect(failed.length).toBeGreaterThan(100);
    for (const c of failed) {
      expect(c.reason).toBe('TimeoutError');
      expect(c.end - c.start).toBeCloseTo(30, 9);
    }
    // Calls that left the dependency's queue do not count as in flight there.
    expect(Math.max(...sim.series.map((s) => s.inFlight))).toBeLessThan(3);
  });

  it('more workers serve the queue at once; probes and per-second percentiles are recorded', async () => {
    const sim: Simulation = new Simulation({
      seed: 7,
      workers: 1,
      probes: { workers: () => sim.workers, inService: () => sim.inService },
    });
    sim.closedLoop({ via: pipeline(), clients: 20 });
    sim.at(5_000, () => {
      sim.workers = 10;
    });
    await sim.run(10_000);
    expect(sim.series.map((s) => s.probes.workers)).toEqual([1, 1, 1, 1, 1, 10, 10, 10, 10, 10]);
    expect(sim.series[9]!.probes.inService).toBe(10);
    expect(mean(sim.series.slice(6).map((s) => s.ok))).toBeGreaterThan(
      8 * mean(sim.series.slice(0, 5).map((s) => s.ok)),
    );
    const last = sim.series[9]!;
    expect(last.p50).toBeLessThan(last.p99);
    // 20 clients on 10 workers: about 40 ms per call.
    expect(last.p50).toBeGreaterThan(20);
    expect(last.p50).toBeLessThan(60);
    expect(percentile([3, 1, 2], 0.5)).toBe(2);
  });
});
