/**
 * A worker thread of benchmarks/scenarios/workers-contended.mjs: it builds its policy from the
 * shared state it is given (or its own, for the unshared rows), waits until every worker of
 * the row is ready and `go` is set, runs `n` operations in a tight loop, and posts the
 * nanoseconds they took. The library is loaded as peers.mjs loads it (BREAKWATER_DIST, else
 * dist/).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { breakwaterModule } from './peers.mjs';

const { task, state, go, n, warmup } = workerData;
const bw = await breakwaterModule('index.js');
const workers = await breakwaterModule('workers/index.js');

/** The operation of each task; each returns 0 when it did what it measures. */
const tasks = {
  // The floor of two threads writing one word: an atomic add on it.
  'bare-add': () => {
    const word = new Int32Array(state);
    return () => {
      Atomics.add(word, 0, 1);
      return 0;
    };
  },
  'shared-limiter': () => {
    const limiter = new workers.SharedRateLimiter(state);
    return () => limiter.tryAcquire();
  },
  'own-limiter': () => {
    const limiter = new bw.RateLimiter({ limit: 1_000_000, period: 1_000, burst: 2_000_000_000 });
    return () => limiter.tryAcquire();
  },
  'shared-bulkhead': () => {
    const bulkhead = new workers.SharedBulkhead(state);
    return () => {
      const token = bulkhead.admit(0);
      if (token >= 0) bulkhead.releaseSuccess(token, undefined);
      return token < 0 ? 1 : 0;
    };
  },
};

const g = new Int32Array(go);
if (task === 'round-trip') {
  // A request to the thread that made the worker and its answer, one after the other.
  const ask = () =>
    new Promise((resolve) => {
      parentPort.once('message', resolve);
      parentPort.postMessage({ ask: true });
    });
  for (let i = 0; i < warmup; i++) await ask();
  Atomics.add(g, 1, 1);
  Atomics.notify(g, 1);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await ask();
  parentPort.postMessage({ ns: Number(process.hrtime.bigint() - t0), failed: 0 });
} else {
  const op = tasks[task]();
  let failed = 0;
  for (let i = 0; i < warmup; i++) failed += op();
  // Ready; then every worker starts together.
  Atomics.add(g, 1, 1);
  Atomics.notify(g, 1);
  Atomics.wait(g, 0, 0);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) failed += op();
  parentPort.postMessage({ ns: Number(process.hrtime.bigint() - t0), failed });
}
