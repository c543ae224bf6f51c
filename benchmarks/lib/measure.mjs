/**
 * Measurement loops, run inside one child process per scenario.
 *
 * Every row gets loops compiled for it alone ({@link freshFunction}), so the loop's call site
 * never carries type feedback from another row of the same process.
 *
 * Row kinds:
 * - 'async': `await op()`; the op must resolve.
 * - 'async-catch': `try { await op() } catch {}`; the op is expected to reject.
 * - 'sync': `op()`; whatever it returns is not awaited.
 * - 'instances': `op()` makes one object that is kept (see {@link timeInstances} and
 *   {@link retainedBytes}).
 * - 'memory': the row measures itself with {@link heapAfterGc}, in an allocation run of its
 *   own (`node --expose-gc`, default heap sizes): its `measure()` returns `{ nsPerOp, nsMin,
 *   nsMax, bytesPerOp, bytesMin, bytesMax, calls, memory }`, `memory` holding figures of its
 *   own (numbers, reported as they are).
 *
 * An op may perform several operations (`opsPerCall`, e.g. 100 calls started together and
 * awaited with Promise.all): every figure is then divided by it, so it is per operation.
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { measure } from 'mitata';
import { max, median, min } from './stats.mjs';

const AsyncFunction = (async () => {}).constructor;

/** Settings of a full run and of a --quick run (a few iterations, to check the harness). */
export const SETTINGS = {
  full: {
    warmupMs: 700,
    batchMs: 50,
    batches: 11,
    mitataCpuMs: 400,
    mitataMinSamples: 12,
    allocTargetMs: 400,
    allocBatches: 3,
    asyncMaxCalls: 100_000,
    syncMaxCalls: 2_000_000,
    instanceRounds: 5,
  },
  quick: {
    warmupMs: 15,
    batchMs: 3,
    batches: 3,
    mitataCpuMs: 5,
    mitataMinSamples: 2,
    allocTargetMs: 10,
    allocBatches: 1,
    asyncMaxCalls: 2_000,
    syncMaxCalls: 20_000,
    instanceRounds: 1,
  },
};

let compiled = 0;

/**
 * `new Function` (or `new AsyncFunction`) whose source no other function of the process has.
 * V8 caches functions compiled from source text, and two functions made from the same text
 * share one feedback vector: the call site in the loop of a row would carry the types of the
 * ops of the rows measured before it (polymorphic, not inlined), and later rows would pay for
 * it. A numbered comment makes every source distinct.
 */
export function freshFunction(Ctor, ...paramsAndBody) {
  const body = paramsAndBody.pop();
  return new Ctor(...paramsAndBody, `/* ${++compiled} */ ${body}`);
}

function compileLoop(kind) {
  if (kind === 'sync') {
    return freshFunction(
      Function,
      'op',
      'n',
      'let r; for (let i = 0; i < n; i++) r = op(); return r;',
    );
  }
  if (kind === 'async-catch') {
    return freshFunction(
      AsyncFunction,
      'op',
      'n',
      'for (let i = 0; i < n; i++) { try { await op(); } catch {} }',
    );
  }
  if (kind === 'async') {
    return freshFunction(AsyncFunction, 'op', 'n', 'for (let i = 0; i < n; i++) await op();');
  }
  throw new Error(`unknown row kind ${kind}`);
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls the op for about `ms` in growing chunks, yielding to the event loop between chunks so
 * timers of the library can run. Returns a rough ns/op.
 */
async function warm(loop, op, ms, opsPerCall = 1) {
  let calls = 0;
  // An op of many operations starts with one call: 16 of them may already take seconds.
  let chunk = opsPerCall > 1 ? 1 : 16;
  const maxChunk = Math.max(1, Math.floor(4096 / opsPerCall));
  const t0 = performance.now();
  do {
    await loop(op, chunk);
    calls += chunk;
    await tick();
    if (chunk < maxChunk) chunk = Math.min(maxChunk, chunk * 2);
  } while (performance.now() - t0 < ms);
  return ((performance.now() - t0) * 1e6) / calls;
}

/**
 * The peer-baseline method: sequential `await op()` in batches of about `batchMs`, timed with
 * hrtime; the process reports the median batch ns/op.
 */
export async function timeAwaitLoop(op, kind, s, opsPerCall = 1) {
  const loop = compileLoop(kind);
  const estimate = await warm(loop, op, s.warmupMs, opsPerCall);
  const calls = Math.max(2, Math.round((s.batchMs * 1e6) / estimate));
  const samples = [];
  for (let b = 0; b < s.batches; b++) {
    const t0 = process.hrtime.bigint();
    await loop(op, calls);
    const t1 = process.hrtime.bigint();
    samples.push(Number(t1 - t0) / (calls * opsPerCall));
    await tick();
  }
  return {
    method: 'await-loop',
    nsPerOp: median(samples),
    nsMin: min(samples),
    nsMax: max(samples),
    calls,
    samples: samples.length,
  };
}

/**
 * ns per op of `op` over `other` (both of the same kind), measured in alternating batches of
 * the await loop in one process, each op with its own loop: the median of the differences
 * between a batch of one and the next batch of the other, the order swapped every pair.
 * Drift of a busy machine then lands on both sides alike, where rows measured one after the
 * other would each get their own share of it.
 */
export async function timeAwaitPair(op, other, kind, s) {
  const loops = [compileLoop(kind), compileLoop(kind)];
  const ops = [op, other];
  const calls = [];
  for (let k = 0; k < 2; k++) {
    const estimate = await warm(loops[k], ops[k], s.warmupMs);
    calls.push(Math.max(2, Math.round((s.batchMs * 1e6) / estimate)));
  }
  const batch = async (k) => {
    const t0 = process.hrtime.bigint();
    await loops[k](ops[k], calls[k]);
    const ns = Number(process.hrtime.bigint() - t0) / calls[k];
    await tick();
    return ns;
  };
  const diffs = [];
  for (let b = 0; b < 2 * s.batches; b++) {
    if (b % 2 === 0) {
      const a = await batch(0);
      diffs.push(a - (await batch(1)));
    } else {
      const o = await batch(1);
      diffs.push((await batch(0)) - o);
    }
  }
  return { versusNs: median(diffs), versusNsMin: min(diffs), versusNsMax: max(diffs) };
}

/** mitata's `measure()` for a synchronous op: the process reports mitata's p50. */
export async function timeMitata(op, s) {
  await warm(compileLoop('sync'), op, s.warmupMs);
  const stats = await measure(op, {
    // Without --expose-gc mitata would "collect" by allocating a 1 GiB array.
    gc: false,
    // mitata compiles its loop from a source holding this number: one of its own per row gives
    // the row a source, and so a feedback vector, of its own (see freshFunction). It is far
    // above the samples min_cpu_time takes.
    max_samples: 1e9 + ++compiled,
    min_cpu_time: s.mitataCpuMs * 1e6,
    min_samples: s.mitataMinSamples,
  });
  return {
    method: 'mitata',
    nsPerOp: stats.p50,
    nsMin: stats.min,
    nsMax: stats.max,
    calls: stats.ticks,
    samples: stats.samples.length,
  };
}

const gcStarts = [];
let observer;

function observeGc() {
  if (observer !== undefined) return;
  observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcStarts.push(entry.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
}

/**
 * Bytes allocated per op: `gc(); gc()`, read `used_heap_size`, run N ops, read it again. A
 * PerformanceObserver on 'gc' entries checks that no collection started inside the batch; if
 * one did, N is halved and the batches are redone. Needs
 * `--expose-gc --min-semi-space-size=512 --max-semi-space-size=512`.
 */
export async function allocation(op, kind, s, opsPerCall = 1) {
  if (typeof globalThis.gc !== 'function') throw new Error('allocation runs need --expose-gc');
  observeGc();
  const loop = compileLoop(kind);
  const estimate = await warm(loop, op, s.warmupMs, opsPerCall);
  const cap = Math.max(
    1,
    Math.floor((kind === 'sync' ? s.syncMaxCalls : s.asyncMaxCalls) / opsPerCall),
  );
  const floor = Math.min(cap, Math.max(1, Math.ceil(50 / opsPerCall)));
  let calls = Math.min(cap, Math.max(floor, Math.round((s.allocTargetMs * 1e6) / estimate)));
  // One unmeasured batch of the measured size: on-stack replacement and code for this size
  // are produced here, not inside a measured batch.
  await loop(op, calls);
  const results = [];
  let gcRetries = 0;
  while (results.length < s.allocBatches) {
    globalThis.gc();
    globalThis.gc();
    await tick();
    let h0;
    let h1;
    let t0;
    let t1;
    if (kind === 'sync') {
      h0 = v8.getHeapStatistics().used_heap_size;
      t0 = performance.now();
      loop(op, calls);
      t1 = performance.now();
      h1 = v8.getHeapStatistics().used_heap_size;
    } else {
      h0 = v8.getHeapStatistics().used_heap_size;
      t0 = performance.now();
      await loop(op, calls);
      t1 = performance.now();
      h1 = v8.getHeapStatistics().used_heap_size;
    }
    // Let the observer deliver any entry of a collection that ran during the batch.
    await sleep(5);
    if (gcStarts.some((t) => t >= t0 && t <= t1)) {
      if (++gcRetries > 10 || calls <= floor) throw new Error('a GC ran inside every batch');
      calls = Math.max(floor, calls >> 1);
      results.length = 0;
      continue;
    }
    results.push((h1 - h0) / (calls * opsPerCall));
  }
  return {
    method: 'heap-delta',
    bytesPerOp: median(results),
    bytesMin: min(results),
    bytesMax: max(results),
    calls,
    gcRetries,
  };
}

/** A packed array of `n` small integers: storing objects in it later allocates nothing. */
function slots(n) {
  const a = [];
  for (let i = 0; i < n; i++) a.push(0);
  return a;
}

async function release(kept, dispose) {
  if (dispose !== undefined) for (const x of kept) dispose(x);
  kept.fill(0);
  await tick();
}

/**
 * Time to make `count` instances that are all kept alive: one unmeasured round, then
 * `instanceRounds` measured ones; the process reports the median round's ns per instance.
 * Collections that making them causes are part of the time (nothing controls GC here).
 * `dispose(instance)` runs after each round, outside the timing.
 */
export async function timeInstances(make, count, s, dispose) {
  const kept = slots(count);
  const samples = [];
  for (let r = -1; r < s.instanceRounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < count; i++) kept[i] = make();
    const t1 = process.hrtime.bigint();
    if (r >= 0) samples.push(Number(t1 - t0) / count);
    await release(kept, dispose);
  }
  return {
    method: 'instances',
    nsPerOp: median(samples),
    nsMin: min(samples),
    nsMax: max(samples),
    calls: count,
    samples: samples.length,
  };
}

/**
 * Bytes each instance keeps alive: `gc(); gc()`, read `used_heap_size`, make `count`
 * instances into a preallocated array, `gc(); gc()` again (so only what the instances retain
 * is left), read it again. Median of `allocBatches` rounds after one unmeasured round.
 */
export async function retainedBytes(make, count, s, dispose) {
  if (typeof globalThis.gc !== 'function') throw new Error('allocation runs need --expose-gc');
  const kept = slots(count);
  const results = [];
  for (let r = -1; r < s.allocBatches; r++) {
    globalThis.gc();
    globalThis.gc();
    await tick();
    const h0 = v8.getHeapStatistics().used_heap_size;
    for (let i = 0; i < count; i++) kept[i] = make();
    globalThis.gc();
    globalThis.gc();
    const h1 = v8.getHeapStatistics().used_heap_size;
    if (r >= 0) results.push((h1 - h0) / count);
    await release(kept, dispose);
  }
  return {
    method: 'retained',
    bytesPerOp: median(results),
    bytesMin: min(results),
    bytesMax: max(results),
    calls: count,
    gcRetries: 0,
  };
}

/**
 * Bytes the heap holds after full collections: `used_heap_size` plus the array buffers (typed
 * arrays larger than 64 bytes keep their elements outside the JavaScript heap).
 */
export function heapAfterGc(collections = 3) {
  if (typeof globalThis.gc !== 'function') throw new Error('memory rows need --expose-gc');
  for (let i = 0; i < collections; i++) globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/**
 * {@link heapAfterGc} once the heap stops shrinking: after enough full collections that V8 has
 * dropped the bytecode of functions no longer run, and in new turns of the event loop until a
 * turn frees nothing more (what a finished row made can stay reachable for a turn or two, from
 * the promise machinery that ran it). Neither is then read as the measured code freeing memory.
 */
export async function settleHeap() {
  let bytes = heapAfterGc(12);
  for (let i = 0; i < 10; i++) {
    await tick();
    const next = heapAfterGc();
    if (next >= bytes) return next;
    bytes = next;
  }
  return bytes;
}
