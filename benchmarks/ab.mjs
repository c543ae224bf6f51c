/**
 * Two builds of the library in one process, on the per-call rows a hot-path change can move:
 * closed breaker, open breaker (a refusal through `tryExecute`), composed pipeline, retry (alone and with a retry budget: a build without
 * budgets runs the retry alone), cooperative timeout, bulkhead, rate limiter, hedge, coalesce, adaptive
 * limit and load shedder (each as `pipeline(policy).execute(target)`), a bulkhead whose calls wait in its queue (FIFO, and CoDel
 * where the build has the `queue` option), and `tryAcquire()`. Each round times every row of the
 * old build and of the new one in alternating order, in batches of the same size, each loop
 * compiled from a source of its own; the report gives the median ns/op of each build and the
 * median of the per-round differences (new - old), then bytes/op of each build.
 *
 *   npm run build && cp -r dist /tmp/new   # and the old commit built the same way, e.g. in a git worktree
 *   taskset -c 1 node --expose-gc benchmarks/ab.mjs OLD_DIST NEW_DIST [--rounds 41] [--batch 50000] [--filter RE]
 *
 * Give two copies of one build to see the noise of the machine: two paths of one build would
 * load one module, whose code then sees both rows' calls.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { allocation, freshFunction } from './lib/measure.mjs';

const AsyncFunction = (async () => {}).constructor;
const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args.splice(i, 2)[1];
};
const rounds = Number(flag('--rounds', 41));
const asyncBatch = Number(flag('--batch', 50_000));
const filter = new RegExp(flag('--filter', '.'));
const [oldDir, newDir] = args;
if (!oldDir || !newDir) {
  console.error('usage: node benchmarks/ab.mjs OLD_DIST NEW_DIST [--rounds N] [--filter RE]');
  process.exit(2);
}

const load = (dir) => import(pathToFileURL(resolve(dir, 'index.js')).href);
const builds = { old: await load(oldDir), new: await load(newDir) };
const target = async () => 1;

/** The rows, as functions of a build's exports returning the op to time. */
const rows = {
  'breaker closed': (bw) => {
    const p = bw.pipeline(
      bw.circuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 }),
    );
    return () => p.execute(target);
  },
  'breaker open, tryExecute': (bw) => {
    const breaker = bw.circuitBreaker({ breakDuration: 10_000 });
    breaker.forceOpen();
    const p = bw.pipeline(breaker);
    return () => p.tryExecute(target);
  },
  composed: (bw) => {
    const p = bw.pipeline(
      bw.retry({ maxAttempts: 4, backoff: 'exponential', delay: 100, multiplier: 2 }),
      bw.circuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 }),
      bw.timeout({ timeout: 1000, strategy: 'cooperative' }),
      bw.bulkhead({ maxConcurrent: 100, maxQueue: 0 }),
    );
    return () => p.execute(target);
  },
  retry: (bw) => {
    const p = bw.pipeline(
      bw.retry({ maxAttempts: 4, backoff: 'exponential', delay: 100, multiplier: 2 }),
    );
    return () => p.execute(target);
  },
  // A build without retry budgets runs the retry alone: new - old is then what the budget adds.
  'retry budget': (bw) => {
    const options = { maxAttempts: 4, backoff: 'exponential', delay: 100, multiplier: 2 };
    if (bw.retryBudget !== undefined) {
      options.budget = bw.retryBudget({ window: 10_000, ratio: 0.2, minRetriesPerSecond: 10 });
    }
    const p = bw.pipeline(bw.retry(options));
    return () => p.execute(target);
  },
  'timeout cooperative': (bw) => {
    const p = bw.pipeline(bw.timeout({ timeout: 1000, strategy: 'cooperative' }));
    return () => p.execute(target);
  },
  bulkhead: (bw) => {
    const p = bw.pipeline(bw.bulkhead({ maxConcurrent: 100, maxQueue: 0 }));
    return () => p.execute(target);
  },
  // Two calls per op through a bulkhead of one: the second waits in the queue for the first.
  'bulkhead queued': (bw) => {
    const p = bw.pipeline(bw.bulkhead({ maxConcurrent: 1, maxQueue: 10 }));
    return () => {
      p.execute(target);
      return p.execute(target);
    };
  },
  // The same with a CoDel queue; a build without the `queue` option runs it FIFO. The interval
  // is long so that a stall of the machine never makes it refuse the waiting call.
  'bulkhead codel queued': (bw) => {
    const codel =
      'queue' in bw.bulkheadDefaults
        ? { queue: 'codel', codelTarget: 1_000, codelInterval: 10_000 }
        : {};
    const p = bw.pipeline(bw.bulkhead({ maxConcurrent: 1, maxQueue: 10, ...codel }));
    return () => {
      p.execute(target);
      return p.execute(target);
    };
  },
  'rate limiter pipeline': (bw) => {
    const limiter = new bw.RateLimiter({ limit: 1_000_000, period: 1_000, burst: 2_000_000_000 });
    const p = bw.pipeline(limiter);
    return () => p.execute(target);
  },
  // Builds from before hedging have no `hedge`: leave the row out with --filter.
  'hedge, first attempt wins': (bw) => {
    const p = bw.pipeline(bw.hedge({ maxHedges: 1, delay: 2000 }));
    return () => p.execute(target);
  },
  // One caller of a key at a time (no one to share with): what a flight costs by itself.
  // Builds from before coalescing have no `coalesce`: leave the row out with --filter.
  'coalesce, one caller': (bw) => {
    const p = bw.pipeline(bw.coalesce());
    const options = { key: 'user:42' };
    return () => p.execute(target, options);
  },
  // Builds from before the adaptive limit have no `adaptiveLimit`: leave the row out with --filter.
  'adaptive limit': (bw) => {
    const p = bw.pipeline(bw.adaptiveLimit());
    return () => p.execute(target);
  },
  // Builds from before the load shedder have no `loadShedder`: leave the row out with --filter.
  'load shedder': (bw) => {
    const p = bw.pipeline(bw.loadShedder());
    return () => p.execute(target);
  },
  'tryAcquire() (sync)': (bw) => {
    const limiter = new bw.RateLimiter({ limit: 1_000_000, period: 1_000, burst: 2_000_000_000 });
    return () => limiter.tryAcquire();
  },
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const results = [];
for (const [name, make] of Object.entries(rows)) {
  if (!filter.test(name)) continue;
  const sync = name.endsWith('(sync)');
  const timed = {};
  for (const which of ['old', 'new']) {
    const op = make(builds[which]);
    const loop = sync
      ? freshFunction(Function, 'op', 'n', 'let r; for (let i = 0; i < n; i++) r = op(); return r;')
      : freshFunction(AsyncFunction, 'op', 'n', 'for (let i = 0; i < n; i++) await op();');
    timed[which] = { op, loop, ns: [] };
  }
  const batch = sync ? asyncBatch * 10 : asyncBatch;
  for (const t of Object.values(timed)) await t.loop(t.op, batch); // warm-up
  const diffs = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
    for (const which of order) {
      const t = timed[which];
      // Each batch starts from an empty young generation, so it pays for its own garbage only.
      globalThis.gc?.();
      const t0 = process.hrtime.bigint();
      await t.loop(t.op, batch);
      t.ns.push(Number(process.hrtime.bigint() - t0) / batch);
    }
    diffs.push(timed.new.ns[r] - timed.old.ns[r]);
  }
  const bytes = {};
  if (typeof globalThis.gc === 'function') {
    const settings = {
      warmupMs: 50,
      allocTargetMs: 20,
      allocBatches: 5,
      asyncMaxCalls: 2_000,
      syncMaxCalls: 20_000,
    };
    for (const which of ['old', 'new']) {
      bytes[which] = (
        await allocation(timed[which].op, sync ? 'sync' : 'async', settings)
      ).bytesPerOp;
    }
  }
  results.push({
    row: name,
    'old ns/op': median(timed.old.ns).toFixed(1),
    'new ns/op': median(timed.new.ns).toFixed(1),
    'new - old (median of rounds)': median(diffs).toFixed(1),
    'old B/op': bytes.old?.toFixed(0) ?? '-',
    'new B/op': bytes.new?.toFixed(0) ?? '-',
  });
}
console.table(results);
