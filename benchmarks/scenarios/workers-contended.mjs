/**
 * Policies shared by worker threads (`breakwater/workers`) under contention: two workers
 * (`node:worker_threads`) running the same operation in a tight loop at once on one shared
 * state, as they would when both serve requests. Each row reports the wall time per operation
 * in each worker (the slower of the two), with `memory` holding `workers`, `opsPerWorker` and
 * `failed` (operations refused: always 0, the rows check it):
 *
 * - `SharedRateLimiter.tryAcquire()` admitting every call (a million per second, a burst of
 *   two billion): each admission a compare-and-swap of the one word both workers write;
 * - the same operation on a `RateLimiter` of each worker's own (two limits, nothing shared):
 *   what sharing costs;
 * - `SharedBulkhead` admit and release (the gate protocol, as a pipeline does), its slots
 *   padded to a 128-byte line each and packed into shared lines: what the padding buys;
 * - the floor: an atomic add on one shared word from both workers (the bare row the others are
 *   measured against);
 * - for scale, a message round trip from a worker to the thread that made it and back, the
 *   way libraries that keep a limit in the main thread decide (one worker, one after the other).
 *
 * The rows start threads, so they run in the allocation runs of their own (`memory`); heap
 * bytes are not measured (`bytesPerOp` 0: the per-thread rows of workers.mjs measure them).
 */
import { Worker } from 'node:worker_threads';
import { breakwaterModule, LIB } from '../lib/peers.mjs';

export const title = 'Policies shared by worker threads, two workers at once';
export const order = 9.3;
/** Measured by its own rows (see measure.mjs, kind 'memory'). */
export const memory = true;

const workers = await breakwaterModule('workers/index.js');
const LOOP = new URL('../lib/worker-loop.mjs', import.meta.url);

/** Runs `task` in `count` workers at once (`n` operations each); ns per op of the slower. */
async function contended(task, state, count, n) {
  const go = new SharedArrayBuffer(8);
  const g = new Int32Array(go);
  const warmup = Math.min(n, 200_000);
  const threads = Array.from(
    { length: count },
    () => new Worker(LOOP, { workerData: { task, state, go, n, warmup } }),
  );
  const results = threads.map(
    (w) =>
      new Promise((resolve, reject) => {
        w.on('message', (m) => {
          if (m.ask) w.postMessage(1);
          else resolve(m);
        });
        w.once('error', reject);
      }),
  );
  for (let ready = Atomics.load(g, 1); ready < count; ready = Atomics.load(g, 1)) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  Atomics.store(g, 0, 1);
  Atomics.notify(g, 0);
  const done = await Promise.all(results);
  await Promise.all(threads.map((w) => w.terminate()));
  const ns = Math.max(...done.map((d) => d.ns)) / n;
  const fastest = Math.min(...done.map((d) => d.ns)) / n;
  return {
    nsPerOp: ns,
    nsMin: fastest,
    nsMax: ns,
    bytesPerOp: 0,
    bytesMin: 0,
    bytesMax: 0,
    calls: n * count,
    memory: {
      workers: count,
      opsPerWorker: n,
      failed: done.reduce((a, d) => a + d.failed, 0),
    },
  };
}

const sharedLimiterState = () =>
  new workers.SharedRateLimiter({ limit: 1_000_000, period: 1_000, burst: 2_000_000_000 }).state;

/** Every operation did what it measures. */
const noneFailed = (f) => f.memory.failed === 0 && f.nsPerOp > 0;

const BARE_ADD = 'Atomics.add on one shared word, 2 workers at once';

export function rows({ quick }) {
  const n = quick ? 20_000 : 5_000_000;
  const trips = quick ? 2_000 : 100_000;
  return [
    {
      library: 'bare',
      variant: BARE_ADD,
      kind: 'memory',
      measure: () => contended('bare-add', new SharedArrayBuffer(4), 2, n),
      check: noneFailed,
    },
    {
      library: LIB.breakwater,
      variant: 'SharedRateLimiter tryAcquire(), 2 workers at once',
      kind: 'memory',
      baseline: BARE_ADD,
      measure: () => contended('shared-limiter', sharedLimiterState(), 2, n),
      check: noneFailed,
    },
    {
      library: LIB.breakwater,
      variant: 'RateLimiter tryAcquire(), one per worker, 2 workers at once',
      kind: 'memory',
      baseline: BARE_ADD,
      measure: () => contended('own-limiter', undefined, 2, n),
      check: noneFailed,
    },
    {
      library: LIB.breakwater,
      variant: 'SharedBulkhead admit + release, 2 workers at once, padded slots',
      kind: 'memory',
      baseline: BARE_ADD,
      measure: () =>
        contended(
          'shared-bulkhead',
          new workers.SharedBulkhead({ maxConcurrent: 100 }).state,
          2,
          n,
        ),
      check: noneFailed,
    },
    {
      library: LIB.breakwater,
      variant: 'SharedBulkhead admit + release, 2 workers at once, packed slots',
      kind: 'memory',
      baseline: BARE_ADD,
      measure: () =>
        contended(
          'shared-bulkhead',
          new workers.SharedBulkhead({ maxConcurrent: 100, layout: 'packed' }).state,
          2,
          n,
        ),
      check: noneFailed,
    },
    {
      library: 'bare',
      variant: 'message round trip, worker to its parent thread and back',
      kind: 'memory',
      measure: () => contended('round-trip', undefined, 1, trips),
      check: noneFailed,
    },
  ];
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs). */
export const budgets = [
  {
    id: 'shared-limiter-contended',
    rank: 43,
    kind: 'limit',
    label: 'shared rate limiter, tryAcquire from 2 workers at once: ns per call',
    scenario: 'workers-contended',
    variant: 'SharedRateLimiter tryAcquire(), 2 workers at once',
    limits: { nsPerOp: 500 },
  },
];
