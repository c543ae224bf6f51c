/**
 * Rate limits kept in Redis, decided from one process: breakwater's `RedisRateLimiter`
 * against rate-limiter-flexible's `RateLimiterRedis`, both on one ioredis 6 client per row
 * (`enableOfflineQueue: false, maxRetriesPerRequest: 0`, and `enableAutoPipelining: true` in
 * the rows that say so) to a `redis-server` this scenario starts on a loopback port and stops
 * at the end. Each row runs `concurrency` callers, each awaiting one call after the other,
 * for a few seconds after a warm-up, on a server emptied before the row:
 *
 * - 100,000 distinct keys taken in turn, never at their limit: every decision is a round trip;
 * - a hot key at its limit (100 per second): breakwater's negative cache on and off, and
 *   rate-limiter-flexible's `inMemoryBlockOnConsumed` on and off;
 * - a hot key called faster than its rate but within its burst, so no call is refused:
 *   breakwater's lease mode (`lease: 10`) and without it.
 *
 * - breakwater's `RedisBulkhead`: a permit taken and given back per call (two round trips:
 *   the acquire script and the release script), with room for every caller, and with 100
 *   callers for 20 permits, where callers wait in line and are woken by pub/sub.
 *
 * The bare rows time an ioredis PING the same way: the floor of a round trip.
 *
 * Each row reports, under `memory` (see measure.mjs, kind 'memory'): `concurrency`,
 * `decisionsPerSecond`, `p50Us` and `p99Us` (each call, from its start to its outcome, as its
 * caller sees it), `roundTripsPer1000` decisions and `roundTripsPerSecond` (commands the server
 * ran for the row, counted by the server: EVALSHA, EVAL, SCRIPT, PING), `admittedPer1000`,
 * `clientCpuUsPerDecision` (this process's CPU time, ioredis included) and
 * `serverUsPerDecision` (the server's time in the row's commands, scripts included), and for
 * breakwater its own counters per 1,000 decisions (`cachedRefusalsPer1000`,
 * `leasedAdmissionsPer1000`) and `fallbackDecisions` (always 0: the rows check it). `nsPerOp`
 * is the wall time per decision (1e9 / decisions per second), its spread the slowest and
 * fastest of its 250 ms slices; `bytesPerOp` is the heap kept after full collections per
 * decision in a run of the row alone (a leak would show there).
 *
 * Rows compared with each other (the two libraries on 100,000 keys at one concurrency) are
 * measured together, in slices taken in turn (see `measureGroup`), so that a machine whose
 * speed drifts during the scenario weighs on both alike; every other row runs alone.
 *
 * Without `redis-server` on PATH the scenario has no rows, and reports both libraries absent.
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { freshFunction, heapAfterGc, settleHeap } from '../lib/measure.mjs';
import {
  breakwaterModule,
  bwRedisHotLimiter,
  bwRedisLeaseLimiter,
  bwRedisLimiter,
  LIB,
  redisClient,
  rlflexRedisHotLimiter,
  rlflexRedisLimiter,
} from '../lib/peers.mjs';
import { redisServerVersion, startRedisServer } from '../lib/redis-server.mjs';

export const title = 'Rate limiter in Redis: decisions per second, latency and round trips';
export const order = 9.5;
/** Measured by its own rows, in allocation runs only (see measure.mjs, kind 'memory'). */
export const memory = true;
/**
 * Not pinned to one core (see lib/cpu.mjs): the redis-server it starts would inherit the pin
 * and share that core with the client, which is not how either runs in production.
 */
export const pinned = false;

const serverVersion = redisServerVersion();

/** Libraries without a row here, and why. */
export const notImplemented =
  serverVersion === undefined
    ? [LIB.breakwater, LIB.rlflex].map((library) => ({
        library,
        reason: 'n/a (redis-server is not on PATH): the Redis rows need a local redis-server',
      }))
    : [];

const KEY_COUNT = 100_000;
const KEYS = Array.from({ length: KEY_COUNT }, (_, i) => `user-${i}`);
const HOT_KEY = 'hot';

/** Commands that are requests of a client: the rest (GET, SET, TIME ...) run inside scripts. */
const REQUESTS = ['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'script', 'ping'];

// ---- latencies -----------------------------------------------------------------------------

const MIN_US = 0.01;
const STEP = 1.01;
const LOG_STEP = Math.log(STEP);
const BUCKETS = 2_200;

/** Call latencies in buckets 1 % apart from 0.01 µs up (a quantile is read to within 1 %). */
class Latencies {
  counts = new Float64Array(BUCKETS);
  total = 0;

  /** Records a call of `ms` milliseconds. */
  add(ms) {
    const us = ms * 1_000;
    const i = us <= MIN_US ? 0 : Math.ceil(Math.log(us / MIN_US) / LOG_STEP);
    this.counts[i < BUCKETS ? i : BUCKETS - 1]++;
    this.total++;
  }

  /** The latency in µs that a share `q` of the calls did not exceed (a bucket's upper end). */
  quantile(q) {
    const rank = Math.ceil(q * this.total);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= rank) return MIN_US * STEP ** i;
    }
    return MIN_US * STEP ** (BUCKETS - 1);
  }
}

// ---- the callers -----------------------------------------------------------------------------

const AsyncFunction = (async () => {}).constructor;

/**
 * One caller's loop, compiled for each row (as measure.mjs does), so the call site carries
 * the feedback of this row only. `call(i)` is one decision on key number `i`; what counts as
 * admitted: `wait`, a resolved 0 (breakwater); `reject`, a resolution (rate-limiter-flexible
 * rejects a refusal with a result that is not an Error, and any Error ends the row); `ping`,
 * every call.
 */
function compileCaller(outcome) {
  const decide = {
    wait: 'const admitted = (await call(i)) === 0 ? 1 : 0;',
    reject:
      'let admitted = 1; try { await call(i); } catch (e) { if (e instanceof Error) throw e; admitted = 0; }',
    ping: 'await call(i); const admitted = 1;',
  }[outcome];
  return freshFunction(
    AsyncFunction,
    'call',
    'run',
    'first',
    'stride',
    'now',
    `let i = first;
    for (;;) {
      const t0 = now();
      if (t0 >= run.end) return;
      ${decide}
      const t1 = now();
      run.decisions++;
      run.admitted += admitted;
      if (run.latencies !== undefined) run.latencies.add(t1 - t0);
      i += stride;
    }`,
  );
}

const now = () => performance.now();

/**
 * `concurrency` callers for `ms`, caller `w` on keys from + w, from + w + concurrency, ...;
 * with `latencies`, records each call.
 */
async function drive(caller, call, concurrency, ms, latencies, from = 0) {
  const start = now();
  const run = { end: start + ms, decisions: 0, admitted: 0, latencies };
  const callers = [];
  for (let w = 0; w < concurrency; w++) {
    callers.push(caller(call, run, from + w, concurrency, now));
  }
  await Promise.all(callers);
  return { ...run, elapsedMs: now() - start };
}

// ---- the server ------------------------------------------------------------------------------

let session;

/** The server and a client of its own for INFO and FLUSHALL, started on first use. */
function server() {
  session ??= (async () => {
    const redis = await startRedisServer();
    const admin = new Redis({ host: redis.host, port: redis.port });
    admin.on('error', () => {});
    return { redis, admin };
  })();
  return session;
}

async function stopServer() {
  if (session === undefined) return;
  const { redis, admin } = await session;
  session = undefined;
  admin.disconnect();
  await redis.stop();
}

/**
 * Requests the server has run (see {@link REQUESTS}) and the µs it spent on them, scripts
 * included, from INFO commandstats.
 */
async function requests(admin) {
  const info = await admin.info('commandstats');
  let calls = 0;
  let us = 0;
  for (const m of info.matchAll(/^cmdstat_([a-z_|]+):calls=(\d+),usec=(\d+)/gm)) {
    if (!REQUESTS.includes(m[1])) continue;
    calls += Number(m[2]);
    us += Number(m[3]);
  }
  return { calls, us };
}

async function connect(port, autoPipelining) {
  const client = redisClient(Redis, port, autoPipelining);
  const errors = [];
  client.on('error', (error) => errors.push(error));
  if (client.status !== 'ready') {
    await new Promise((resolve, reject) => {
      client.once('ready', resolve);
      client.once('end', () => reject(errors[0] ?? new Error('ioredis: connection ended')));
    });
  }
  return client;
}

// ---- a group of rows ------------------------------------------------------------------------

const per1000 = (n, decisions) => (n * 1_000) / decisions;

/** Measured time per row, in slices of {@link SLICE_MS} taken in turn by the rows of a group. */
const RUN_MS = 2_500;
const SLICE_MS = 250;

/** A row ready to run: its client, limiter, call and compiled caller, and its sums so far. */
async function setUp(spec, port) {
  const client = await connect(port, spec.autoPipelining);
  const limiter = await spec.make(client);
  return {
    spec,
    client,
    limiter,
    call: spec.call(limiter, client),
    caller: compileCaller(spec.outcome),
    latencies: new Latencies(),
    decisions: 0,
    admitted: 0,
    elapsedMs: 0,
    cpuUs: 0,
    roundTrips: 0,
    serverUs: 0,
    slices: [],
    /** The key the next slice starts from: each slice goes on where the last one stopped. */
    nextKey: 0,
    stats0: undefined,
  };
}

/** One slice of row `r`: its calls, and the server's and this process's work for them. */
async function slice(r, admin, ms) {
  const requests0 = await requests(admin);
  const cpu0 = process.cpuUsage();
  const { concurrency } = r.spec;
  const run = await drive(r.caller, r.call, concurrency, ms, r.latencies, r.nextKey);
  const cpu = process.cpuUsage(cpu0);
  r.nextKey += Math.ceil(run.decisions / concurrency) * concurrency;
  const requests1 = await requests(admin);
  r.decisions += run.decisions;
  r.admitted += run.admitted;
  r.elapsedMs += run.elapsedMs;
  r.cpuUs += cpu.user + cpu.system;
  r.roundTrips += requests1.calls - requests0.calls;
  r.serverUs += requests1.us - requests0.us;
  r.slices.push((run.elapsedMs * 1e6) / run.decisions);
}

/**
 * Heap kept per decision by row `r` run alone for `ms`, on keys it has not used yet (a leak,
 * or a map of keys filling up, would show here).
 */
async function keptBytes(r, heap, ms) {
  const heap0 = await heap();
  const run = await drive(r.caller, r.call, r.spec.concurrency, ms, undefined, r.nextKey);
  return ((await heap()) - heap0) / run.decisions;
}

/** The row's figures (see the scenario's comment) from its sums. */
function figuresOf(r, kept) {
  const { decisions, elapsedMs } = r;
  const ns = (elapsedMs * 1e6) / decisions;
  const figures = {
    concurrency: r.spec.concurrency,
    decisionsPerSecond: (decisions * 1_000) / elapsedMs,
    p50Us: r.latencies.quantile(0.5),
    p99Us: r.latencies.quantile(0.99),
    roundTripsPer1000: per1000(r.roundTrips, decisions),
    roundTripsPerSecond: (r.roundTrips * 1_000) / elapsedMs,
    admittedPer1000: per1000(r.admitted, decisions),
    clientCpuUsPerDecision: r.cpuUs / decisions,
    serverUsPerDecision: r.serverUs / decisions,
  };
  const stats0 = r.stats0;
  const stats1 = r.stats1;
  if (stats1?.fallbackAdmissions !== undefined) {
    figures.fallbackDecisions = stats1.fallbackAdmissions - stats0.fallbackAdmissions;
  } else if (stats1 !== undefined) {
    figures.cachedRefusalsPer1000 = per1000(
      stats1.cachedRefusals - stats0.cachedRefusals,
      decisions,
    );
    figures.leasedAdmissionsPer1000 = per1000(
      stats1.leasedAdmissions - stats0.leasedAdmissions,
      decisions,
    );
    figures.fallbackDecisions = stats1.fallbackDecisions - stats0.fallbackDecisions;
  }
  return {
    nsPerOp: ns,
    nsMin: Math.min(ns, ...r.slices),
    nsMax: Math.max(ns, ...r.slices),
    bytesPerOp: kept,
    bytesMin: kept,
    bytesMax: kept,
    calls: decisions,
    memory: figures,
  };
}

/**
 * Measures rows that are compared with each other (breakwater and rate-limiter-flexible on the
 * same shape) together: each gets a fresh client and limiter on a server emptied before the
 * group and a warm-up, then the rows take {@link SLICE_MS} slices in turn, in the order ABBA,
 * so a machine that slows down or speeds up during the group weighs on every row alike. The
 * heap each row keeps is read afterwards, each row run alone.
 */
async function measureGroup(specs, quick) {
  const { redis, admin } = await server();
  await admin.flushall();
  const rows = [];
  // A quick run checks the harness: one collection instead of waiting for the heap to settle.
  const heap = quick ? async () => heapAfterGc(1) : settleHeap;
  try {
    for (const spec of specs) rows.push(await setUp(spec, redis.port));
    for (const r of rows) await drive(r.caller, r.call, r.spec.concurrency, quick ? 50 : 500);
    for (const r of rows) r.stats0 = r.limiter?.stats?.();
    const sliceMs = quick ? 50 : SLICE_MS;
    const rounds = Math.max(1, Math.round((quick ? 200 : RUN_MS) / sliceMs));
    for (let k = 0; k < rounds; k++) {
      const order = k % 2 === 0 ? rows : [...rows].reverse();
      for (const r of order) await slice(r, admin, sliceMs);
    }
    for (const r of rows) r.stats1 = r.limiter?.stats?.();
    const results = [];
    for (const r of rows) results.push(figuresOf(r, await keptBytes(r, heap, quick ? 100 : 1_000)));
    return results;
  } finally {
    for (const r of rows) {
      r.limiter?.dispose?.();
      r.client.disconnect();
    }
  }
}

// ---- the rows --------------------------------------------------------------------------------

const count = (n) => n.toLocaleString('en-US');
const at = (concurrency, autoPipelining) =>
  `concurrency ${concurrency}${autoPipelining ? ', auto-pipelining' : ''}`;

const bareVariant = (concurrency, autoPipelining) =>
  `ioredis PING, ${at(concurrency, autoPipelining)}`;

/** The figures are finite, and the breakwater limiter never fell back to deciding locally. */
function sound(f) {
  const m = f.memory;
  return (
    f.calls > 0 &&
    f.nsPerOp > 0 &&
    Object.values(m).every(Number.isFinite) &&
    (m.fallbackDecisions === undefined || m.fallbackDecisions === 0)
  );
}

/** Every decision was admitted and went to Redis. */
const everyCallARoundTrip = (f) =>
  sound(f) && f.memory.admittedPer1000 === 1_000 && f.memory.roundTripsPer1000 >= 999;

/** Every decision was admitted (some without a round trip). */
const allAdmitted = (f) => sound(f) && f.memory.admittedPer1000 === 1_000;

/** Most calls were refused: the key is at its limit. */
const mostlyRefused = (f) => sound(f) && f.memory.admittedPer1000 < 500;

export function rows({ quick }) {
  if (serverVersion === undefined) return [];
  const keys = count(KEY_COUNT);
  const list = [];
  /** Adds rows measured together (see measureGroup): the first to run measures them all. */
  const addGroup = (...specs) => {
    let results;
    for (const [i, row] of specs.entries()) {
      list.push({
        library: row.library,
        variant: row.variant,
        kind: 'memory',
        baseline: row.baseline,
        measure: async () => {
          results ??= measureGroup(specs, quick);
          return (await results)[i];
        },
        check: row.check,
      });
    }
  };
  const add = (row) => addGroup(row);

  const bw = breakwaterModule('redis/index.js');
  // breakwater's limiters are made once the module is loaded (made in measure, awaited there).
  const withBw = (make) => async (client) => make(await bw, client);

  const shapes = [
    [1, false],
    [100, false],
    [100, true],
  ];
  for (const [concurrency, autoPipelining] of shapes) {
    add({
      library: 'bare',
      variant: bareVariant(concurrency, autoPipelining),
      concurrency,
      autoPipelining,
      outcome: 'ping',
      make: () => undefined,
      call: (_, client) => () => client.ping(),
      check: sound,
    });
  }
  for (const [concurrency, autoPipelining] of shapes) {
    addGroup(
      {
        library: LIB.breakwater,
        variant: `tryAcquire(key), ${keys} keys, ${at(concurrency, autoPipelining)}`,
        baseline: bareVariant(concurrency, autoPipelining),
        concurrency,
        autoPipelining,
        outcome: 'wait',
        make: withBw(bwRedisLimiter),
        call: (limiter) => (i) => limiter.tryAcquire(KEYS[i % KEY_COUNT]),
        check: everyCallARoundTrip,
      },
      {
        library: LIB.rlflex,
        variant: `consume(key), ${keys} keys, ${at(concurrency, autoPipelining)}`,
        baseline: bareVariant(concurrency, autoPipelining),
        concurrency,
        autoPipelining,
        outcome: 'reject',
        make: (client) => rlflexRedisLimiter(client),
        call: (rl) => (i) => rl.consume(KEYS[i % KEY_COUNT]),
        check: everyCallARoundTrip,
      },
    );
  }
  const hot = 100;
  for (const negativeCache of [true, false]) {
    add({
      library: LIB.breakwater,
      variant: `hot key at its limit, negative cache ${negativeCache ? 'on' : 'off'}, ${at(hot)}`,
      baseline: bareVariant(hot, false),
      concurrency: hot,
      autoPipelining: false,
      outcome: 'wait',
      make: withBw((m, client) => bwRedisHotLimiter(m, client, negativeCache)),
      call: (limiter) => () => limiter.tryAcquire(HOT_KEY),
      check: mostlyRefused,
    });
  }
  for (const inMemoryBlockOnConsumed of [100, 0]) {
    add({
      library: LIB.rlflex,
      variant: `hot key at its limit, ${
        inMemoryBlockOnConsumed > 0
          ? `inMemoryBlockOnConsumed ${inMemoryBlockOnConsumed}`
          : 'no in-memory block'
      }, ${at(hot)}`,
      baseline: bareVariant(hot, false),
      concurrency: hot,
      autoPipelining: false,
      outcome: 'reject',
      make: (client) => rlflexRedisHotLimiter(client, inMemoryBlockOnConsumed),
      call: (rl) => () => rl.consume(HOT_KEY),
      check: mostlyRefused,
    });
  }
  for (const concurrency of [1, 100]) {
    for (const lease of [10, 1]) {
      add({
        library: LIB.breakwater,
        variant: `hot key below its limit, ${lease > 1 ? `lease ${lease}` : 'no lease'}, ${at(concurrency)}`,
        baseline: bareVariant(concurrency, false),
        concurrency,
        autoPipelining: false,
        outcome: 'wait',
        make: withBw((m, client) => bwRedisLeaseLimiter(m, client, lease)),
        call: (limiter) => () => limiter.tryAcquire(HOT_KEY),
        check: allAdmitted,
      });
    }
  }
  // The shared bulkhead: one permit taken and given back per call (two round trips), with room
  // for every caller, and with 100 callers for 20 permits (callers wait, woken by pub/sub).
  for (const [concurrency, max] of [
    [1, 1_000],
    [100, 1_000],
    [100, 20],
  ]) {
    add({
      library: LIB.breakwater,
      variant: `RedisBulkhead acquire + release, maxConcurrent ${count(max)}, ${at(concurrency)}`,
      baseline: bareVariant(concurrency, false),
      concurrency,
      autoPipelining: false,
      outcome: 'wait',
      make: withBw(
        (m, client) =>
          new m.RedisBulkhead({
            client,
            name: `bench-${max}`,
            maxConcurrent: max,
            maxQueue: 1_000,
            onWarning: () => {},
          }),
      ),
      call: (bulkhead) => async () => {
        const permit = await bulkhead.acquire();
        await permit.release();
        return 0;
      },
      check: allAdmitted,
    });
  }
  // The server stops after the last row (and is killed if the process ends before).
  const last = list[list.length - 1];
  const measureLast = last.measure;
  last.measure = async () => {
    try {
      return await measureLast();
    } finally {
      await stopServer();
    }
  };
  return list;
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'rate-limiter-redis-throughput',
    rank: 13,
    kind: 'limit',
    label:
      'Redis rate limiter, 100,000 keys, concurrency 100 on loopback: ≥ 50,000 decisions/s (≤ 20,000 ns per decision)',
    scenario: 'rate-limiter-redis',
    variant: 'tryAcquire(key), 100,000 keys, concurrency 100',
    limits: { nsPerOp: 20_000 },
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ report }) {
  const redis = report.rows.filter(
    (r) => r.scenario === 'rate-limiter-redis' && r.decisionsPerSecond !== undefined,
  );
  if (redis.length > 0) {
    const f1 = (x) => (x === undefined ? '–' : Number(x).toLocaleString('en-US'));
    return (
      'Rate limits on Redis (one process, a redis-server on loopback sharing the machine’s cores; ' +
      'round trips counted by the server):\n\n' +
      '| library | row | decisions/s | p50 / p99 µs | round trips per 1,000 | admitted per 1,000 |\n' +
      '|---|---|---:|---:|---:|---:|\n' +
      redis
        .map(
          (r) =>
            `| ${r.library} | ${r.variant} | ${f1(Math.round(r.decisionsPerSecond))} | ` +
            `${f1(r.p50Us)} / ${f1(r.p99Us)} | ${f1(r.roundTripsPer1000)} | ` +
            `${f1(r.admittedPer1000)} |`,
        )
        .join('\n')
    );
  }
}

/** What is known when a budget of breakwater's own is missed, with figures from the same run. */
export function ownMissNote({ report, missed }) {
  if (missed.has('rate-limiter-redis-throughput')) {
    return (
      '**Redis rate limiter.** Its process is not pinned: the client and the Redis server share the ' +
      `machine's ${report.machine.cores} cores with each other and with whatever else runs (load ` +
      `average ${report.loadAverage.start} at the start of the run, ${report.loadAverage.end} at the ` +
      'end), and a decision at concurrency 100 waits for the time the server gets.'
    );
  }
}
