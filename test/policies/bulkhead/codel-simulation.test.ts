import { beforeAll, describe, expect, it } from 'vitest';
import type { BulkheadQueue } from '../../../src/index.js';
import { bulkheadOverload } from '../../support/bulkheadOverload.js';
import { percentile } from '../../support/queueing.js';

type Run = Awaited<ReturnType<typeof bulkheadOverload>>;
const runs = {} as Record<BulkheadQueue, Run>;

describe('bulkhead queue disciplines at 1.5 x overload for 60 s (simulated)', () => {
  beforeAll(async () => {
    for (const queue of ['fifo', 'lifo', 'codel'] as const)
      runs[queue] = await bulkheadOverload(queue);
  }, 60_000);

  it('codel: no admitted call waited more than 100 ms (codelInterval), and the dependency stays busy', () => {
    const { sim, served, refused, waits } = runs.codel;
    expect(served.length).toBeGreaterThan(0.97 * sim.capacityPerSecond * 60);
    expect(Math.max(...waits)).toBeLessThanOrEqual(100);
    // Refused by CoDel only, each after waiting past the 5 ms target (never by the 1 s timeout).
    expect(refused.length).toBeGreaterThan(0.3 * sim.calls.length);
    expect(refused.filter((c) => c.reason !== 'codel')).toEqual([]);
    const refusedWaits = refused.map((c) => c.end - c.start);
    expect(Math.min(...refusedWaits)).toBeGreaterThan(5);
    expect(Math.max(...refusedWaits)).toBeLessThan(1_000);
    expect(percentile([...waits], 0.5)).toBeLessThan(50);
    expect(sim.series.slice(2).every((s) => s.inFlight > 9)).toBe(true);
  });

  it('fifo: every admitted call waits about the queue timeout once the queue has built', () => {
    const { sim, served, refused, waits } = runs.fifo;
    expect(served.length).toBeGreaterThan(0.97 * sim.capacityPerSecond * 60);
    const late = served.filter((c) => c.start > 10_000).map((c) => c.admitted - c.start);
    expect(percentile(late, 0.01)).toBeGreaterThan(950);
    expect(Math.max(...waits)).toBeLessThanOrEqual(1_000);
    expect(refused.filter((c) => c.reason !== 'queue-timeout')).toEqual([]);
    expect(refused.filter((c) => Math.abs(c.end - c.start - 1_000) > 1e-6)).toEqual([]);
  });

  it('lifo: the newest callers are served at once, and the oldest wait out the queue timeout', () => {
    const { sim, served, refused, waits } = runs.lifo;
    const fifo = runs.fifo;
    expect(served.length).toBeGreaterThan(0.97 * sim.capacityPerSecond * 60);
    expect(percentile([...waits], 0.5)).toBeLessThan(5);
    expect(percentile([...waits], 0.5)).toBeLessThan(percentile([...fifo.waits], 0.5) / 100);
    expect(refused.length).toBeGreaterThan(0.3 * sim.calls.length);
    expect(refused.filter((c) => c.reason !== 'queue-timeout')).toEqual([]);
    expect(refused.filter((c) => Math.abs(c.end - c.start - 1_000) > 1e-6)).toEqual([]);
  });

  it('all three admit about the same number of calls: the discipline picks who, not how many', () => {
    const [fifo, lifo, codel] = [runs.fifo, runs.lifo, runs.codel].map((r) => r.served.length) as [
      number,
      number,
      number,
    ];
    expect(Math.abs(lifo - fifo) / fifo).toBeLessThan(0.03);
    expect(Math.abs(codel - fifo) / fifo).toBeLessThan(0.03);
  });
});
