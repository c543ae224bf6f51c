/**
 * The protected fetch (`protectedFetch()` of breakwater/http, the standard preset with no
 * options) against bare `fetch`, one GET after the other to a loopback node:http server that
 * answers 200 with a 2-byte body (http-target.mjs, in a process of its own: this process holds
 * the client alone, so its bytes are the client's). Each call reads the body. Beside them, on
 * undici's own fetch and pool: undici's retry interceptor (at most 2 retries), the one peer
 * installed that retries a fetch in one call, and breakwater's `protectedDispatch()`, the
 * protected fetch's engine as an undici interceptor.
 *
 * The difference is a microsecond or two on a request of 50-150 µs, smaller than the drift of a
 * busy machine between two rows measured one after the other. So the rows of a group (the bare
 * row first) are timed in slices of the same number of requests (about 40 ms, so that each
 * holds a young-generation collection or two rather than some none) taken in turn, the order
 * rotated every round and reversed every other one, and a row's overhead is the median of its
 * differences from the bare slice of the same round, with its 95 % confidence interval; rounds
 * are added until every interval is at most 1 µs wide (or 25 s have passed, 12 s for the undici
 * group). `nsPerOp` is the median slice, its spread the fastest and slowest slices; the row's
 * `overheadNs` is the median difference (not the difference of the medians), `overheadLowNs` /
 * `overheadHighNs` its interval (`spreadNs` its width), and `overheadMeanNs` the mean
 * difference (which, unlike the median, carries the rare slow slice: a collection the extra
 * bytes caused). Bytes are allocated bytes per request in this process (measure.mjs's heap
 * delta, no collection inside a batch).
 */
import {
  alternatingSlices,
  bwProtectedAgent,
  bwProtectedFetch,
  medianInterval,
  sliceFigures,
  startFetchTarget,
  undiciAgent,
  undiciRetryAgent,
} from '../lib/http.mjs';
import { allocation, SETTINGS } from '../lib/measure.mjs';
import { breakwaterModule, LIB } from '../lib/peers.mjs';
import { fmtNs } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';

export const title = 'Protected fetch: overhead per request on loopback';
export const order = 20;
/** Measured by its own rows, in allocation runs only (see measure.mjs, kind 'memory'). */
export const memory = true;
/** Not pinned (see lib/cpu.mjs): the target server would inherit the pin and share the core. */
export const pinned = false;

const http = await breakwaterModule('http/index.js').catch(() => ({}));
const undici = await import('undici');
const hasProtectedFetch = typeof http.protectedFetch === 'function';
const hasProtectedDispatch = typeof http.protectedDispatch === 'function';

/** Libraries without a row here, and why. */
export const notImplemented = [
  ...(hasProtectedFetch
    ? []
    : [
        {
          library: LIB.breakwater,
          reason: 'n/a: this build has no protectedFetch (breakwater/http)',
        },
      ]),
  {
    library: 'ky',
    reason:
      'n/a: ky is not a dependency of benchmarks/ (only the peers the issue names are installed); ' +
      'undici’s retry interceptor is the row of a fetch retried in one call',
  },
];

const BARE_FETCH = 'fetch(url), body read';
const BARE_UNDICI = 'undici fetch(url) on its own pool, body read';
const SIGNALLED = 'fetch(url, { signal }), a new AbortController each request, body read';
const PROTECTED = 'protectedFetch()(url), standard preset, body read';
const UNDICI_RETRY = 'undici fetch(url), retry interceptor (2 retries), body read';
const PROTECTED_DISPATCH = 'undici fetch(url), protectedDispatch() interceptor, body read';

/** Slices are added until the interval of every row's difference is narrower than this. */
const WIDTH_NS = 1_000;

let target;

/** The target server, started on first use, stopped after the last row. */
function targetUrl() {
  target ??= startFetchTarget();
  return target.then((t) => t.url);
}

async function stopTarget() {
  if (target === undefined) return;
  const t = await target;
  target = undefined;
  await t.stop();
}

/** A GET of `url` through `fetch`, its body read: resolves with the body ('ok'). */
const getter = (fetch, url, init) => async () => {
  const response = await fetch(url, init);
  return response.text();
};

/** The figures of a row measured against the bare row (see the scenario's comment). */
function overheadFigures(diffs, bareNs) {
  const [lo, hi] = medianInterval(diffs);
  const overheadNs = median(diffs);
  return {
    overheadNs,
    overheadLowNs: lo,
    overheadHighNs: hi,
    spreadNs: hi - lo,
    overheadPct: (overheadNs / bareNs) * 100,
    overheadMeanNs: diffs.reduce((a, b) => a + b, 0) / diffs.length,
  };
}

/**
 * Measures a group of rows (the bare row first) in alternating slices, then the bytes each
 * allocates per request; one figure object per row.
 */
async function measureGroup(specs, quick, maxMs) {
  const url = await targetUrl();
  const ops = specs.map((spec) => spec.make(url));
  for (const op of ops) {
    const body = await op();
    if (body !== 'ok') throw new Error(`unexpected body ${JSON.stringify(body)}`);
  }
  const { slices, diffs, callsPerSlice } = await alternatingSlices(ops, {
    warmMs: quick ? 30 : 1_500,
    sliceMs: quick ? 3 : 40,
    minMs: quick ? 50 : 4_000,
    maxMs: quick ? 100 : maxMs,
    width: WIDTH_NS,
  });
  // A request allocates some 50 kB: batches of about 100 requests fit in the young generation
  // of a process with the default heap sizes (a memory scenario's), where thousands would not.
  const settings = quick
    ? SETTINGS.quick
    : { ...SETTINGS.full, allocTargetMs: 15, allocBatches: 5 };
  const bytes = [];
  for (const op of ops) bytes.push(await allocation(op, 'async', settings));
  const bareNs = median(slices[0]);
  const counts = { requests: slices[0].length * callsPerSlice, rounds: slices[0].length };
  return ops.map((_, k) =>
    sliceFigures(slices[k], callsPerSlice, bytes[k], {
      ...counts,
      ...(k > 0 ? overheadFigures(diffs[k], bareNs) : {}),
    }),
  );
}

const sound = (f) =>
  f.calls > 0 &&
  f.nsPerOp > 0 &&
  Number.isFinite(f.bytesPerOp) &&
  Object.values(f.memory).every(Number.isFinite);

export function rows({ quick }) {
  const list = [];
  /**
   * Rows measured together against the first, the bare row (see measureGroup), for `maxMs` at
   * most: the first to run measures them all.
   */
  const addGroup = (specs, maxMs) => {
    let results;
    for (const [i, spec] of specs.entries()) {
      list.push({
        library: spec.library,
        variant: spec.variant,
        baseline: spec.baseline,
        kind: 'memory',
        measure: async () => {
          results ??= measureGroup(specs, quick, maxMs);
          return (await results)[i];
        },
        check: sound,
      });
    }
  };
  if (hasProtectedFetch) {
    addGroup(
      [
        { library: 'bare', variant: BARE_FETCH, make: (url) => getter(fetch, url) },
        // The least any client that can cut a request pays: fetch's own cost of a signal.
        {
          library: 'bare',
          variant: SIGNALLED,
          baseline: BARE_FETCH,
          make: (url) => async () => {
            const response = await fetch(url, { signal: new AbortController().signal });
            return response.text();
          },
        },
        {
          library: LIB.breakwater,
          variant: PROTECTED,
          baseline: BARE_FETCH,
          make: (url) => getter(bwProtectedFetch(http), url),
        },
      ],
      25_000,
    );
  }
  const onPool = (dispatcher) => (url) => getter(undici.fetch, url, { dispatcher });
  addGroup(
    [
      { library: 'bare', variant: BARE_UNDICI, make: onPool(undiciAgent(undici)) },
      {
        library: 'undici',
        variant: UNDICI_RETRY,
        baseline: BARE_UNDICI,
        make: onPool(undiciRetryAgent(undici)),
      },
      ...(hasProtectedDispatch
        ? [
            {
              library: LIB.breakwater,
              variant: PROTECTED_DISPATCH,
              baseline: BARE_UNDICI,
              make: onPool(bwProtectedAgent(undici, http)),
            },
          ]
        : []),
    ],
    12_000,
  );
  // The target stops after the last row (and is killed if the process ends before).
  const last = list.at(-1);
  const measureLast = last.measure;
  last.measure = async () => {
    try {
      return await measureLast();
    } finally {
      await stopTarget();
    }
  };
  return list;
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'protected-fetch-overhead',
    rank: 40,
    kind: 'limit',
    label:
      'protected fetch (standard preset) over bare fetch on loopback: ≤ 2 µs and ≤ 2 % per request, ' +
      'measured to a 95 % interval narrower than 2 µs',
    scenario: 'http-fetch',
    variant: PROTECTED,
    limits: { overheadNs: 2_000, overheadPct: 2, spreadNs: 2_000 },
  },
];

const us = (x) => `${(x / 1_000).toFixed(2)} µs`;

/** This scenario's paragraph in “What the numbers say”; none when its rows are absent. */
export function reading({ get }) {
  const S = 'http-fetch';
  const bare = get(S, 'bare', BARE_FETCH);
  const bw = get(S, LIB.breakwater, PROTECTED);
  const undiciBare = get(S, 'bare', BARE_UNDICI);
  const retry = get(S, 'undici', UNDICI_RETRY);
  const dispatch = get(S, LIB.breakwater, PROTECTED_DISPATCH);
  const interval = (r) =>
    `median of ${r.rounds} rounds of slices, 95 % interval ${us(r.overheadLowNs)} to ` +
    `${us(r.overheadHighNs)}, mean ${us(r.overheadMeanNs)}`;
  const parts = [];
  if (bare && bw) {
    parts.push(
      `The protected fetch (standard preset: retry with a budget, per-origin breaker and adaptive ` +
        `limit, attempt timeout and total deadline) adds ${us(bw.overheadNs)} (${interval(bw)}; ` +
        `${Number(bw.requests).toLocaleString('en-US')} requests each) to a loopback GET of ` +
        `${us(bare.nsPerOp)}, ${fmtNs(bw.overheadPct)} % of it, and ` +
        `${Math.round(bw.overheadBytes)} B allocated per request over bare fetch's ` +
        `${Math.round(bare.bytesPerOp)} B.`,
    );
  }
  if (undiciBare && retry) {
    parts.push(
      `On undici's own fetch (${us(undiciBare.nsPerOp)}), its retry interceptor adds ` +
        `${us(retry.overheadNs)} (${interval(retry)}) and ${Math.round(retry.overheadBytes)} B; ` +
        'it retries, but has no breaker, limit, budget or deadline.',
    );
  }
  if (undiciBare && dispatch) {
    parts.push(
      `The same engine as the protected fetch, as an undici interceptor (\`protectedDispatch()\`), ` +
        `adds ${us(dispatch.overheadNs)} (${interval(dispatch)}) and ` +
        `${Math.round(dispatch.overheadBytes)} B.`,
    );
  }
  if (parts.length > 0) return parts.join(' ');
}

/** What is known when the protected fetch's budget is missed, with figures from the same run. */
export function ownMissNote({ report, get, missed }) {
  const bw = get('http-fetch', LIB.breakwater, PROTECTED);
  if (!missed.has('protected-fetch-overhead') || bw === undefined) return undefined;
  return (
    `**Protected fetch.** ${us(bw.overheadNs)} over bare fetch, 95 % interval ${us(bw.overheadLowNs)} ` +
    `to ${us(bw.overheadHighNs)} after ${bw.rounds} rounds of slices (the mean difference ` +
    `${us(bw.overheadMeanNs)}). The client, the target server and whatever else runs share the ` +
    `machine's ${report.machine.cores} cores (load average ${report.loadAverage.start} at the start ` +
    `of the run, ${report.loadAverage.end} at the end)` +
    (bw.spreadNs > 2_000
      ? ': the interval is wider than the budget, so this run could not tell.'
      : ': the interval is narrower than the budget, so the overhead is the library’s.')
  );
}
