/**
 * What the HTTP scenarios (http-fetch, http-server) share: the processes they start beside the
 * measured one (the dependency the fetch rows call, the load generator of the server rows),
 * slices of rows taken in turn, and the configuration of every HTTP row, breakwater's and
 * the peers', whose source the doc prints (keep option values literal in the factories).
 *
 * The frameworks and peers are passed in as modules, never imported here: peers.mjs lists these
 * factories for the doc, and every scenario process loads peers.mjs.
 */
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { freshFunction } from './measure.mjs';
import { median } from './stats.mjs';

// ---- processes beside the measured one ------------------------------------------------------

const children = new Set();
let hooked = false;

/** Kills the children on exit, and on the signals that end a process without an exit event. */
function hookExit() {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      for (const child of children) child.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
  }
}

/**
 * A Node process running `script` (a file of this folder), with an IPC channel, with
 * `execArgv` rather than the measured process's flags (--expose-gc, heap sizes): it is killed
 * when this process ends, and exits by itself when the channel closes.
 */
function child(script, execArgv = []) {
  hookExit();
  const proc = fork(new URL(script, import.meta.url), [], {
    execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  const stop = () =>
    new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  return { proc, stop };
}

/** The first message `proc` sends, or a rejection if it exits before. */
function firstMessage(proc) {
  return new Promise((resolve, reject) => {
    const onExit = (code, signal) => reject(new Error(`child exited (${code ?? signal})`));
    proc.once('exit', onExit);
    proc.once('message', (m) => {
      proc.off('exit', onExit);
      resolve(m);
    });
  });
}

/**
 * The loopback dependency of the fetch rows (http-target.mjs: 200 with a 2-byte body), in a
 * process of its own, so the measured process holds the client alone: its time per request
 * includes the server's only as the wait for the answer, and its bytes are the client's.
 */
export async function startFetchTarget() {
  const { proc, stop } = child('./http-target.mjs');
  const { port } = await firstMessage(proc);
  return { url: `http://127.0.0.1:${port}/`, stop };
}

/**
 * Questions to `proc` answered by id: `ask(message)` sends `{ id, ...message }` and resolves
 * with the answer of the same id (rejects with its `error`, or when the process exits).
 */
function asker(proc) {
  let next = 0;
  const pending = new Map();
  proc.on('message', (m) => {
    const settle = pending.get(m.id);
    pending.delete(m.id);
    settle?.(m);
  });
  proc.once('exit', (code, signal) => {
    for (const settle of pending.values()) settle({ error: `child exited (${code ?? signal})` });
    pending.clear();
  });
  return (message) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, (m) => (m.error ? reject(new Error(m.error)) : resolve(m)));
      proc.send({ id, ...message });
    });
}

/**
 * autocannon in a process of its own (http-load.mjs), so the load generator never shares the
 * measured server's event loop. `run({ url, connections, durationMs | amount })` runs one load.
 */
export function startLoadGenerator() {
  const { proc, stop } = child('./http-load.mjs');
  return { run: asker(proc), stop };
}

/**
 * A server of the http-server scenario in a process of its own (http-app.mjs), started with
 * `--expose-gc` so it can read what it allocates: `app` is `{ framework, guard }` (see
 * http-app.mjs). Each server has its process, so no row runs with what another row's code left
 * in the process: the feedback of a framework's call sites, or the async hooks that a request
 * context's AsyncLocalStorage turns on for every promise.
 */
export async function startApp(app) {
  const { proc, stop } = child('./http-app.mjs', ['--expose-gc']);
  const ask = asker(proc);
  const { url } = await ask({ type: 'start', app });
  return {
    url,
    heapStart: () => ask({ type: 'heapStart' }),
    heapEnd: () => ask({ type: 'heapEnd' }),
    stop,
  };
}

// ---- two rows in alternating slices ---------------------------------------------------------

const AsyncFunction = (async () => {}).constructor;

/** `n` sequential `await op()`, compiled for one row alone (see measure.mjs, freshFunction). */
const compileLoop = () =>
  freshFunction(AsyncFunction, 'op', 'n', 'for (let i = 0; i < n; i++) await op();');

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** ns per call of `n` calls of `op` through `loop`. */
async function timed(loop, op, n) {
  const t0 = process.hrtime.bigint();
  await loop(op, n);
  const ns = Number(process.hrtime.bigint() - t0) / n;
  await tick();
  return ns;
}

/**
 * A distribution-free 95 % confidence interval of the median of `values` (the order statistics
 * of ranks n/2 ∓ 0.98 √n), or the whole range when there are too few values for one.
 */
export function medianInterval(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  const j = Math.floor((n - 1.96 * Math.sqrt(n)) / 2);
  if (j < 1) return [s[0], s[n - 1]];
  return [s[j - 1], s[n - j]];
}

/**
 * Times `ops[0]` (the bare call) and the other ops in slices of the same number of calls taken
 * in turn (the order rotated every round and reversed every other one), so drift of a busy
 * machine weighs on all alike, and takes each op's difference from the bare slice of the same
 * round. Rounds are added until the 95 % interval of every op's median difference is at most
 * `width` ns wide (and `minMs` has passed), or `maxMs` has passed.
 */
export async function alternatingSlices(ops, { warmMs, sliceMs, minMs, maxMs, width }) {
  const loops = ops.map(() => compileLoop());
  let estimate = 0;
  for (const [k, op] of ops.entries()) {
    let calls = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < warmMs) {
      await loops[k](op, 16);
      calls += 16;
      await tick();
    }
    if (k === 0) estimate = ((performance.now() - t0) * 1e6) / calls;
  }
  const n = Math.max(4, Math.round((sliceMs * 1e6) / estimate));
  const slices = ops.map(() => []);
  const diffs = ops.map(() => []);
  const narrow = (d) => {
    const [lo, hi] = medianInterval(d);
    return hi - lo <= width;
  };
  const t0 = performance.now();
  for (let round = 0; ; round++) {
    const order = ops.map((_, i) => (i + round) % ops.length);
    if (round % 2 === 1) order.reverse();
    const ns = [];
    for (const k of order) ns[k] = await timed(loops[k], ops[k], n);
    for (const [k, x] of ns.entries()) {
      slices[k].push(x);
      if (k > 0) diffs[k].push(x - ns[0]);
    }
    const elapsed = performance.now() - t0;
    if (elapsed >= maxMs) break;
    if (elapsed < minMs || round < 8) continue;
    if (diffs.slice(1).every(narrow)) break;
  }
  return { callsPerSlice: n, slices, diffs };
}

/** The figures of one row of {@link alternatingSlices}, as a 'memory' row reports them. */
export function sliceFigures(slices, callsPerSlice, bytes, memory) {
  return {
    method: 'alternating slices',
    nsPerOp: median(slices),
    nsMin: Math.min(...slices),
    nsMax: Math.max(...slices),
    bytesPerOp: bytes.bytesPerOp,
    bytesMin: bytes.bytesMin,
    bytesMax: bytes.bytesMax,
    calls: slices.length * callsPerSlice,
    memory,
  };
}

// ---- bytes a server allocates per request ----------------------------------------------------

/**
 * Bytes `server` (see {@link startApp}) allocates per request while `load(amount)` sends it
 * `amount` requests from another process: it collects twice and reads its heap size, the load
 * runs, it reads its heap size again, as measure.mjs's `allocation` does; a batch during which
 * the server started a collection is halved and done again. The median of `batches` batches.
 */
export async function serverAllocation(server, load, amount, batches) {
  const results = [];
  let n = amount;
  let retries = 0;
  while (results.length < batches) {
    await server.heapStart();
    const served = await load(n);
    const { bytes, collected } = await server.heapEnd();
    if (collected) {
      if (++retries > 12 || n <= 20) throw new Error('a GC ran inside every batch');
      n = Math.max(20, n >> 1);
      results.length = 0;
      continue;
    }
    results.push(bytes / served);
  }
  return {
    bytesPerOp: median(results),
    bytesMin: Math.min(...results),
    bytesMax: Math.max(...results),
  };
}

// ---- configurations: keep the option values literal, their source is printed in the doc ------

/** breakwater's protected fetch with the standard preset and no options. */
export const bwProtectedFetch = ({ protectedFetch }) => protectedFetch();

/** undici's own pool, without retries: the bare call the undici rows are measured against. */
export const undiciAgent = ({ Agent }) => new Agent();

/**
 * undici's retry interceptor on its own pool, at most 2 retries like breakwater's preset (its
 * other defaults: idempotent methods, 429 and 5xx but 501, backoff from 500 ms).
 */
export const undiciRetryAgent = ({ Agent, interceptors }) =>
  new Agent().compose(interceptors.retry({ maxRetries: 2 }));

/**
 * The protected fetch's engine (the same standard preset, no options) as an interceptor on
 * undici's own pool.
 */
export const bwProtectedAgent = ({ Agent }, { protectedDispatch }) =>
  new Agent().compose(protectedDispatch());

/**
 * express-rate-limit per client IP (its default key) with the guard's rate, a million a second,
 * never reached in a run (a fixed window of 1 s where the guard's GCRA allows a burst of a
 * million), its memory store, and the IETF draft-8 `RateLimit` headers on every response.
 */
export const expressRateLimiter = (rateLimit) =>
  rateLimit({
    windowMs: 1_000,
    limit: 1_000_000,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
  });

/**
 * @fastify/under-pressure shedding on event-loop delay and utilisation at thresholds a run
 * never reaches (it samples every second by default).
 */
export const underPressureOptions = () => ({
  maxEventLoopDelay: 1_000,
  maxEventLoopUtilization: 0.999,
});

/**
 * breakwater's service guard as the server rows use it: a rate limit per client (the guard's
 * default key, the client address) of a million a second, never reached in a run, the draft-8
 * `RateLimit` headers on every response, and the adaptive concurrency limit for inbound requests.
 */
export const bwServiceGuard = ({ serviceGuard }, { KeyedRateLimiter }) =>
  serviceGuard({
    rateLimit: {
      limiter: new KeyedRateLimiter({ limit: 1_000_000, period: 1_000 }),
      headers: 'draft-8',
    },
    concurrency: true,
  });

const src = (f) => f.toString().replace(/\s+/g, ' ');

/** The configuration of every HTTP row, as the source of the factory that built it. */
export function httpConfigs() {
  return [
    { library: 'breakwater', use: 'protected fetch', source: src(bwProtectedFetch) },
    { library: 'breakwater', use: 'protected undici dispatcher', source: src(bwProtectedAgent) },
    { library: 'breakwater', use: 'service guard', source: src(bwServiceGuard) },
    { library: 'undici', use: 'pool of the bare undici fetch row', source: src(undiciAgent) },
    { library: 'undici', use: 'retry interceptor', source: src(undiciRetryAgent) },
    {
      library: 'express-rate-limit',
      use: 'rate limit per client',
      source: src(expressRateLimiter),
    },
    {
      library: '@fastify/under-pressure',
      use: 'load shedding',
      source: src(underPressureOptions),
    },
  ];
}
