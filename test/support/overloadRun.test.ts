/**
 * The harness of the HTTP overload runs, on a short run: what it counts adds up, and its
 * per-second series is what scripts/chart-adaptive.mjs draws. Counts and shapes only; the
 * one timed reading (the limit, once a second) has 700 ms of slack.
 */
import { describe, expect, it } from 'vitest';
import { toPoints } from '../../scripts/chart-adaptive.mjs';
import { bulkhead, pipeline } from '../../src/index.js';
import { overloadRun, overloadTable } from './overloadRun.js';

describe('overload run', () => {
  it('counts each call that ended in the window once; refusals never reach the server', async () => {
    const gate = bulkhead({ maxConcurrent: 2 });
    const run = await overloadRun({
      server: { workers: 2, serviceMs: 20 },
      clients: 6,
      warmupMs: 200,
      durationMs: 1_500,
      via: pipeline(gate),
      limit: () => gate.maxConcurrent,
    });
    expect(run.calls).toBe(run.answered + run.refused + run.failed);
    expect(run.refused).toBeGreaterThan(0);
    expect(run.answered).toBeGreaterThan(0);
    expect(run.failed).toBe(0);
    expect(run.server.maxInFlight).toBeLessThanOrEqual(2);
    expect(run.server.received).toBe(run.server.served);
    expect(run.server.received).toBe(gate.stats().admitted);
    expect(run.p50).toBeLessThanOrEqual(run.p99);
    expect(run.p99).toBeLessThanOrEqual(run.max);
    expect(gate.stats().inFlight).toBe(0);
    // One whole second (the run lasted 1.7 s): the limit read at its end.
    expect(run.series).toHaveLength(1);
    expect(toPoints(run.series)).toEqual(run.series);
    expect(run.series[0]).toMatchObject({ t: 0, limit: 2 });
    expect(run.series[0]!.inflight).toBeGreaterThan(0);
    expect(run.series[0]!.inflight).toBeLessThanOrEqual(2);
    const table = overloadTable(run, [{ name: 'bulkhead 2', run }]).split('\n');
    expect(table).toHaveLength(4);
    expect(table[3]).toMatch(/^\| bulkhead 2 \|\s+6 \|/);
  });
});
