/**
 * Requests per second a server answers on loopback: a route answering 200 with a 2-byte body,
 * bare and behind breakwater's service guard (`serviceGuard` of breakwater/http: a rate limit per
 * client with a limit never reached, and the adaptive concurrency limit), in Express 5, Fastify 5
 * and node:http; beside them express-rate-limit (Express, the same rate limit) and
 * @fastify/under-pressure (Fastify, load shedding on event-loop delay and utilisation), each at
 * limits a run never reaches. Each row's server runs in a process of its own (http-app.mjs), so
 * no row runs with what another row left in its process: the feedback of the framework's call
 * sites, or the async hooks the guard's request context (AsyncLocalStorage) turns on for every
 * promise of the process.
 *
 * The load generator is autocannon's programmatic API in a process of its own (http-load.mjs;
 * 10 connections, no pipelining), so it never shares the measured server's event loop; the
 * scenario is not pinned, so the two can run on two cores. The rows of one framework take
 * slices of 1 s in turn (the order rotated and reversed each round), so a machine whose speed
 * drifts weighs on all of them alike (after a warm-up of one slice each). A slice with an
 * error or a timeout fails the run; answers other than 2xx (refusals: no row should refuse, its
 * limits are never reached) are counted (`refusedPer1000`) and left out of the requests per
 * second. The rate-limited rows report `rateLimitHeaders`: 1 when their first answer carried
 * the `RateLimit` field, 0 when not.
 *
 * `nsPerOp` is the wall time per answered request (1e9 / requests per second), its spread the
 * slowest and fastest slices; under `memory`: `requestsPerSecond`, the median slice's `p50Ms` / `p99Ms`
 * (autocannon's latencies), and for the guarded rows `throughputLossPct`, the requests per second
 * lost against the bare route of the same framework. `bytesPerOp` is what the server's process
 * allocates per request, from its heap before and after a batch of requests with no
 * collection inside (see http.mjs, serverAllocation), sent by a plain node:http client in the
 * load generator's process (autocannon can only stop at a whole second).
 */
import { serverAllocation, startApp, startLoadGenerator } from '../lib/http.mjs';
import { breakwaterModule, LIB } from '../lib/peers.mjs';
import { median } from '../lib/stats.mjs';

export const title = 'Service guard: requests per second on loopback';
export const order = 21;
/** Measured by its own rows, in allocation runs only (see measure.mjs, kind 'memory'). */
export const memory = true;
/** Not pinned (see lib/cpu.mjs): the load generator would inherit the pin and share the core. */
export const pinned = false;

const http = await breakwaterModule('http/index.js').catch(() => ({}));
const hasGuard = typeof http.serviceGuard === 'function';

/** Libraries without a row here, and why. */
export const notImplemented = hasGuard
  ? []
  : [{ library: LIB.breakwater, reason: 'n/a: this build has no serviceGuard (breakwater/http)' }];

const CONNECTIONS = 10;
const BODY = 'ok';

const EXPRESS = 'Express 5';
const FASTIFY = 'Fastify 5';
const NODE = 'node:http';
const bareVariant = (framework) => `${framework}, bare route`;
const guardVariant = (framework) =>
  `${framework}, serviceGuard (rate limit per client + adaptive concurrency limit)`;

let loadGenerator;
const load = () => (loadGenerator ??= startLoadGenerator());

async function stopLoad() {
  const l = loadGenerator;
  loadGenerator = undefined;
  await l?.stop();
}

/**
 * One load of `durationMs` (or `amount` requests) on `url`, with `answered`: the requests
 * answered with 2xx. An error or a timeout fails the run.
 */
async function run(url, loadOptions) {
  const r = await (await load()).run({ url, connections: CONNECTIONS, ...loadOptions });
  if (r.errors !== 0 || r.timeouts !== 0 || r.requests === r.non2xx) {
    throw new Error(
      `${url}: ${r.requests} requests, ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} not 2xx`,
    );
  }
  return { ...r, answered: r.requests - r.non2xx };
}

/**
 * Measures the rows of one framework together: every server started, checked with one request,
 * warmed, then slices taken in turn (see the scenario's comment), then each server's bytes per
 * request; the servers are closed at the end. One figure object per row.
 */
async function measureGroup(specs, quick) {
  const servers = [];
  try {
    for (const spec of specs) servers.push(await startApp(spec.app));
    /** Whether each server's first answer carried a `RateLimit` header field. */
    const headed = [];
    for (const s of servers) {
      const response = await fetch(s.url);
      const text = await response.text();
      if (response.status !== 200 || text !== BODY) {
        throw new Error(`${s.url}: ${response.status} ${JSON.stringify(text)}`);
      }
      headed.push(response.headers.has('ratelimit'));
    }
    // autocannon counts whole seconds. A quick run checks the harness: no warm-up, one slice.
    const sliceMs = 1_000;
    const rounds = quick ? 1 : 4;
    if (!quick) for (const s of servers) await run(s.url, { durationMs: sliceMs });
    const sums = servers.map(() => ({
      answered: 0,
      refused: 0,
      elapsedMs: 0,
      slices: [],
      p50: [],
      p99: [],
    }));
    for (let round = 0; round < rounds; round++) {
      const order = servers.map((_, i) => (i + round) % servers.length);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const r = await run(servers[i].url, { durationMs: sliceMs });
        const sum = sums[i];
        sum.answered += r.answered;
        sum.refused += r.non2xx;
        sum.elapsedMs += r.elapsedMs;
        sum.slices.push((r.elapsedMs * 1e6) / r.answered);
        sum.p50.push(r.p50Ms);
        sum.p99.push(r.p99Ms);
      }
    }
    const bytes = [];
    for (const s of servers) {
      const batch = (amount) => run(s.url, { amount }).then((r) => r.requests);
      bytes.push(await serverAllocation(s, batch, quick ? 100 : 1_000, quick ? 1 : 3));
    }
    const rps = sums.map((s) => (s.answered * 1_000) / s.elapsedMs);
    return sums.map((s, i) => {
      const nsPerOp = (s.elapsedMs * 1e6) / s.answered;
      const memory = {
        connections: CONNECTIONS,
        requestsPerSecond: rps[i],
        refusedPer1000: (s.refused * 1_000) / (s.answered + s.refused),
        p50Ms: median(s.p50),
        p99Ms: median(s.p99),
      };
      if (i > 0) memory.throughputLossPct = (1 - rps[i] / rps[0]) * 100;
      if (specs[i].rateLimited) memory.rateLimitHeaders = headed[i] ? 1 : 0;
      return {
        method: 'autocannon',
        nsPerOp,
        nsMin: Math.min(nsPerOp, ...s.slices),
        nsMax: Math.max(nsPerOp, ...s.slices),
        ...bytes[i],
        calls: s.answered,
        memory,
      };
    });
  } finally {
    for (const s of servers) await s.stop();
  }
}

const sound = (f) =>
  f.calls > 0 &&
  f.nsPerOp > 0 &&
  Number.isFinite(f.bytesPerOp) &&
  Object.values(f.memory).every(Number.isFinite);

export function rows({ quick }) {
  const list = [];
  /** Adds the rows of one framework, measured together: the first to run measures them all. */
  const addGroup = (specs) => {
    let results;
    for (const [i, spec] of specs.entries()) {
      list.push({
        library: spec.library,
        variant: spec.variant,
        baseline: spec.baseline,
        kind: 'memory',
        measure: async () => {
          results ??= measureGroup(specs, quick);
          return (await results)[i];
        },
        check: sound,
      });
    }
  };
  /** The rows of `framework`: bare, behind breakwater's guard, and behind each peer. */
  const group = (framework, name, peers) => {
    const bare = bareVariant(framework);
    const specs = [{ library: 'bare', variant: bare, app: { framework: name, guard: 'none' } }];
    if (hasGuard) {
      specs.push({
        library: LIB.breakwater,
        variant: guardVariant(framework),
        baseline: bare,
        rateLimited: true,
        app: { framework: name, guard: 'breakwater' },
      });
    }
    for (const p of peers) specs.push({ ...p, baseline: bare });
    addGroup(specs);
  };
  const floor = (framework, name) => ({
    library: 'bare',
    variant: `${framework}, an AsyncLocalStorage run and a close listener per request (by hand)`,
    app: { framework: name, guard: 'context' },
  });
  group(EXPRESS, 'express', [
    floor(EXPRESS, 'express'),
    {
      library: 'express-rate-limit',
      variant: `${EXPRESS}, express-rate-limit (rate limit per client)`,
      rateLimited: true,
      app: { framework: 'express', guard: 'express-rate-limit' },
    },
  ]);
  group(FASTIFY, 'fastify', [
    floor(FASTIFY, 'fastify'),
    {
      library: '@fastify/under-pressure',
      variant: `${FASTIFY}, @fastify/under-pressure (event-loop delay and utilisation)`,
      app: { framework: 'fastify', guard: 'under-pressure' },
    },
  ]);
  group(NODE, 'node', [floor(NODE, 'node')]);
  // The load generator stops after the last row (and is killed if the process ends before).
  const last = list.at(-1);
  const measureLast = last.measure;
  last.measure = async () => {
    try {
      return await measureLast();
    } finally {
      await stopLoad();
    }
  };
  return list;
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [EXPRESS, FASTIFY].map((framework, i) => ({
  id: `service-guard-${framework.split(' ')[0].toLowerCase()}`,
  rank: 41 + i,
  kind: 'limit',
  label: `service guard (rate limit + adaptive limit) in ${framework}: ≥ 97 % of the bare route's requests/s (≤ 3 % lost)`,
  scenario: 'http-server',
  variant: guardVariant(framework),
  limits: { throughputLossPct: 3 },
}));

const rps = (r) => `${Math.round(r.requestsPerSecond).toLocaleString('en-US')}/s`;
const share = (r, bare) => `${((r.requestsPerSecond / bare.requestsPerSecond) * 100).toFixed(1)} %`;

/** This scenario's paragraph in “What the numbers say”; none when its rows are absent. */
export function reading({ get }) {
  const S = 'http-server';
  const parts = [];
  const peers = {
    [EXPRESS]: ['express-rate-limit', `${EXPRESS}, express-rate-limit (rate limit per client)`],
    [FASTIFY]: [
      '@fastify/under-pressure',
      `${FASTIFY}, @fastify/under-pressure (event-loop delay and utilisation)`,
    ],
  };
  for (const framework of [EXPRESS, FASTIFY, NODE]) {
    const bare = get(S, 'bare', bareVariant(framework));
    const bw = get(S, LIB.breakwater, guardVariant(framework));
    if (!bare || !bw) continue;
    let s =
      `${framework}: the bare route answers ${rps(bare)}, behind the service guard ${rps(bw)} ` +
      `(${share(bw, bare)}, ${Math.round(bw.overheadBytes)} B more allocated per request` +
      `${bw.rateLimitHeaders === 0 ? '; this build sent no `RateLimit` header' : ''}` +
      `${bw.refusedPer1000 > 0 ? `; it refused ${bw.refusedPer1000} per 1,000 requests` : ''})`;
    const [library, variant] = peers[framework] ?? [];
    const peer = library && get(S, library, variant);
    if (peer) {
      s += `, behind ${library} ${rps(peer)} (${share(peer, bare)}, ${Math.round(peer.overheadBytes)} B more)`;
    }
    parts.push(`${s}.`);
  }
  if (parts.length === 0) return undefined;
  return (
    `Servers on loopback under autocannon (10 connections, in a process of its own): ${parts.join(' ')} ` +
    'Each peer does half the guard’s job: express-rate-limit limits the rate per client and has no ' +
    'concurrency limit; @fastify/under-pressure sheds on event-loop pressure and limits no rate.'
  );
}

/** What is known when a budget of the guard is missed, with figures from the same run. */
export function ownMissNote({ report, get, missed }) {
  const lost = [EXPRESS, FASTIFY]
    .filter((f) => missed.has(`service-guard-${f.split(' ')[0].toLowerCase()}`))
    .map((f) => [f, get('http-server', LIB.breakwater, guardVariant(f))])
    .filter(([, r]) => r !== undefined);
  if (lost.length === 0) return undefined;
  return (
    `**Service guard.** ${lost
      .map(
        ([f, r]) => `${f}: ${r.throughputLossPct.toFixed(1)} % of the bare route's requests/s lost`,
      )
      .join(
        '; ',
      )}. The server and autocannon share the machine's ${report.machine.cores} cores with ` +
    `each other and with whatever else runs (load average ${report.loadAverage.start} at the start of ` +
    `the run, ${report.loadAverage.end} at the end); a slice that loses its core to another process ` +
    'counts against the row it measures.'
  );
}
