/**
 * Hedging against a simulated dependency on a ManualClock, its latencies drawn from a seeded
 * source: the tail it cuts, and how it holds back in an outage.
 */
import { describe, expect, it } from 'vitest';
import { hedge, pipeline } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { concurrencyBudget } from '../../support/budget.js';
import { simulatedDependency } from '../../support/dependency.js';
import { seededRandom } from '../../support/random.js';

/** The `q` quantile of `values` (nearest rank). */
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/**
 * Starts one call every `every` ms for `ms` ms through `run`, recording how long each took;
 * resolves once every call settled.
 */
async function drive(
  clock: ManualClock,
  ms: number,
  every: number,
  run: () => Promise<unknown>,
): Promise<{ start: number; took: number }[]> {
  const calls: { start: number; took: number }[] = [];
  const pending: Promise<unknown>[] = [];
  for (let t = 0; t < ms; t += every) {
    const start = clock.now();
    const record = { start, took: Number.NaN };
    calls.push(record);
    pending.push(
      run().then(() => {
        record.took = clock.now() - start;
      }),
    );
    await clock.advanceAsync(every);
  }
  await clock.runAll(1_000_000);
  await Promise.all(pending);
  return calls;
}

describe('Hedging the tail', () => {
  it('cuts p99.9 from 1 s to at most 40 ms with a p95 delay and one hedge, for at most 6 % extra attempts', async () => {
    const clock = new ManualClock();
    const random = seededRandom(17);
    // 10 ms, or stuck for 1 s for 2 % of attempts, independently.
    const dep = simulatedDependency(clock, () => (random() < 0.02 ? 1_000 : 10));
    const h = hedge({ clock, maxHedges: 1, delay: { percentile: 0.95, minSamples: 100 } });
    const p = pipeline(h);
    const calls = await drive(clock, 30_000, 1, () => p.execute(dep.call));

    const tooks = calls.map((c) => c.took);
    expect(quantile(tooks, 0.999)).toBeLessThanOrEqual(40);
    const extra = dep.started - calls.length;
    expect(extra).toBe(h.stats().hedges);
    expect(extra / calls.length).toBeLessThanOrEqual(0.06);
    // Without the hedge, 2 % of calls would take 1 s: p99.9 would be 1 s.
    expect(h.stats().won).toBeGreaterThan(0.015 * calls.length);
    expect(dep.inFlight).toBe(0);
    expect(h.pending).toBe(0);
  });
});

describe('Hedging in an outage', () => {
  it('keeps extra attempts within the shared budget while every attempt is slow, and hedges again within 10 s of recovery', async () => {
    const clock = new ManualClock();
    const random = seededRandom(23);
    const outageFrom = 10_000;
    const outageTo = 70_000;
    const dep = simulatedDependency(clock, (now) =>
      now >= outageFrom && now < outageTo ? 1_000 : random() < 0.02 ? 1_000 : 10,
    );
    const budget = concurrencyBudget({ ratio: 0.2, min: 3 });
    const h = hedge({ clock, delay: { percentile: 0.95, minSamples: 100 }, budget });
    const hedgesAt: number[] = [];
    h.onHedge(() => hedgesAt.push(clock.now()));
    let hedgesInFlight = 0;
    let overBudget = 0;
    const p = pipeline(h);
    const calls = await drive(clock, 90_000, 10, () =>
      p.execute(async (context) => {
        if (context.hedge === 0) return dep.call(context);
        hedgesInFlight++;
        if (hedgesInFlight > budget.allowance()) overBudget++;
        try {
          return await dep.call(context);
        } finally {
          hedgesInFlight--;
        }
      }),
    );

    expect(overBudget).toBe(0);
    // In the outage every call outlives the delay; the budget alone holds the hedges back.
    const inOutage = (t: number) => t >= outageFrom && t < outageTo;
    const outageCalls = calls.filter((c) => inOutage(c.start)).length;
    const outageHedges = hedgesAt.filter(inOutage).length;
    expect(outageHedges).toBeGreaterThan(0);
    expect(outageHedges / outageCalls).toBeLessThanOrEqual(0.2);
    expect(budget.refused).toBeGreaterThan(0);
    expect(h.stats().refused).toBe(budget.refused);
    // Hedging is back within 10 s: the 2 % of stuck attempts are hedged again.
    const later = calls.filter((c) => c.start >= outageTo + 10_000).map((c) => c.took);
    expect(later.length).toBe(1_000);
    expect(quantile(later, 0.99)).toBeLessThanOrEqual(40);
    expect(hedgesAt.some((t) => t >= outageTo && t < outageTo + 10_000)).toBe(true);
    // Every call and every extra attempt given back.
    expect(budget).toMatchObject({ active: 0, extra: 0 });
    expect(budget.calls).toBe(calls.length);
    expect(budget.callsEnded).toBe(calls.length);
    expect(budget.ended).toBe(budget.granted);
    expect(budget.granted).toBe(h.stats().hedges);
  });
});
