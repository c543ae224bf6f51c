/**
 * Hedging against a simulated dependency on a ManualClock, its latencies drawn from a seeded
 * source: the tail it cuts, and how it holds back in an outage.
 */
import { describe, expect, it } from 'vitest';
import { hedge, pipeline, retry, retryBudget, TimeoutError } from '../../../src/index.js';
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

  it("stays within the library's own retry budget (concurrency model), shared with a retry", async () => {
    const clock = new ManualClock();
    const random = seededRandom(29);
    const outageFrom = 10_000;
    const outageTo = 70_000;
    const dep = simulatedDependency(clock, (now) =>
      now >= outageFrom && now < outageTo ? 1_000 : random() < 0.02 ? 1_000 : 10,
    );
    const budget = retryBudget({ model: 'concurrency', ratio: 0.2, minRetryConcurrency: 3, clock });
    const h = hedge({ clock, delay: { percentile: 0.95, minSamples: 100 }, budget });
    // A second pipeline to the same dependency retries from the same budget.
    const retrying = pipeline(
      retry({ budget, maxAttempts: 3, delay: 1, backoff: 'constant', jitter: 'none', clock }),
    );
    let extrasInFlight = 0;
    let overBudget = 0;
    const p = pipeline(h);
    const calls = await drive(clock, 90_000, 10, () =>
      Promise.all([
        p.execute(async (context) => {
          if (context.hedge === 0) return dep.call(context);
          extrasInFlight++;
          // Envoy's rule: one starts while fewer than max(3, 0.2 × calls in progress) run.
          if (extrasInFlight > Math.ceil(Math.max(3, 0.2 * budget.stats().active))) overBudget++;
          try {
            return await dep.call(context);
          } finally {
            extrasInFlight--;
          }
        }),
        retrying.tryExecute(() => Promise.reject(new Error('down'))),
      ]),
    );
    expect(overBudget).toBe(0);
    const inOutage = (t: number) => t >= outageFrom && t < outageTo;
    expect(calls.filter((c) => inOutage(c.start)).length).toBe(6_000);
    const stats = budget.stats();
    expect(stats.refused).toBeGreaterThan(0);
    expect(stats).toMatchObject({ active: 0, inFlight: 0 });
    // Hedges and retries both spent from it: every grant was a hedge or a retry.
    const retries = retrying.policies[0]! as ReturnType<typeof retry>;
    expect(stats.allowed).toBe(h.stats().hedges + retries.stats().retries);
    expect(h.stats().hedges).toBeGreaterThan(0);
    expect(retries.stats().retries).toBeGreaterThan(0);
  });
});

describe('Hedging under a deadline given to the call', () => {
  it('settles at the deadline with every attempt aborted, and shows the deadline to each attempt', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 20, maxHedges: 2 });
    const seen: [number, number, number][] = [];
    const aborted: number[] = [];
    let settled: unknown;
    const call = pipeline(h)
      .execute(
        (ctx) => {
          seen.push([ctx.hedge, ctx.deadline, ctx.timeLeft]);
          ctx.signal.addEventListener('abort', () => aborted.push(ctx.hedge));
          return new Promise(() => {}); // never answers, ignores its signal
        },
        { timeout: 50 },
      )
      .catch((e: unknown) => {
        settled = e;
      });
    await clock.advanceAsync(50);
    await call;
    expect(settled).toBeInstanceOf(TimeoutError);
    expect(settled).toMatchObject({ policyName: 'execute' });
    expect(seen).toEqual([
      [0, 50, 50],
      [1, 50, 30],
      [2, 50, 10],
    ]);
    expect(aborted.sort()).toEqual([0, 1, 2]);
    expect(h.pending).toBe(0);
  });
});
