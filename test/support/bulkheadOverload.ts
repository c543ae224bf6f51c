import { Bulkhead, type BulkheadQueue, pipeline } from '../../src/index.js';
import { Simulation } from './queueing.js';

/**
 * 60 simulated seconds of Poisson arrivals at 1.5 x what the dependency serves (10 workers of
 * 20 ms: 500 calls/s), through a bulkhead of 10 with a queue of 1,000 and a queue timeout of
 * 1 s, queued by `queue`. Seeded: the same calls and the same series on every run.
 */
export async function bulkheadOverload(queue: BulkheadQueue) {
  const sim = new Simulation({ seed: 7, workers: 10, serviceMs: 20 });
  const pool = new Bulkhead({
    maxConcurrent: 10,
    maxQueue: 1_000,
    queueTimeout: 1_000,
    queue,
    clock: sim.clock,
  });
  sim.openLoop({ via: pipeline(pool), rate: 1.5 * sim.capacityPerSecond });
  await sim.run(60_000);
  const ended = sim.calls.filter((c) => c.outcome !== 'pending');
  const served = ended.filter((c) => c.outcome === 'ok');
  const refused = ended.filter((c) => c.outcome === 'refused');
  const waits = served.map((c) => c.admitted - c.start);
  return { sim, pool, ended, served, refused, waits };
}
