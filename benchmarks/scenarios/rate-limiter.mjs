/**
 * Taking a rate-limiter permit while permits are available, in memory: breakwater's
 * `RateLimiter` (a million per second, a burst of two billion: never reached in a run), its
 * `tryAcquire`, `acquire` and the limiter as a pipeline policy; rate-limiter-flexible's
 * `RateLimiterMemory.consume` with so many points the limit is never reached, and bottleneck's
 * `schedule` with `maxConcurrent: 100, minTime: 0`; one call in flight, and 100 in flight at
 * once. Then one limit per key over 100,000 distinct keys, taken in turn: breakwater's
 * `KeyedRateLimiter` and rate-limiter-flexible's limiter. The Redis limiters are in
 * rate-limiter-redis.mjs.
 */
import { pipeline } from '../lib/breakwater.mjs';
import {
  bottleneckLimiter,
  breakwaterModule,
  bwKeyedRateLimiter,
  bwRateLimiter,
  LIB,
  rlflexLimiter,
} from '../lib/peers.mjs';
import { bytes, ms, ns, over, ratio } from '../lib/prose.mjs';
import { BARE_ASYNC, BARE_SYNC, bareAsync, bareSync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Rate limiter, permit available';
export const order = 9;

const bw = await breakwaterModule('index.js');

const IN_FLIGHT = 100;
const BARE_X100 = `${IN_FLIGHT} × target() in flight, Promise.all`;

/** All `IN_FLIGHT` calls resolved (to anything: a permit result or the target's value). */
const allSettledOk = (o) => o.ok && Array.isArray(o.value) && o.value.length === IN_FLIGHT;

/** `IN_FLIGHT` calls of `start()` at once, awaited together; one op is IN_FLIGHT operations. */
function inFlight(start) {
  const pending = new Array(IN_FLIGHT);
  return () => {
    for (let i = 0; i < IN_FLIGHT; i++) pending[i] = start();
    return Promise.all(pending);
  };
}

const KEY = 'k';

/** Distinct keys the keyed rows take a permit for, one after the other, round and round. */
const KEY_COUNT = 100_000;
const KEYS = Array.from({ length: KEY_COUNT }, (_, i) => `user-${i}`);

/** `take(key)` with the next of {@link KEYS} on each call. */
function cycling(take) {
  let i = 0;
  return () => {
    i = i + 1 === KEY_COUNT ? 0 : i + 1;
    return take(KEYS[i]);
  };
}

/** Admitted at once: `tryAcquire` returns 0 (no wait). */
const admitted = (o) => o.ok && o.value === 0;

export function rows() {
  return [
    bareAsync(),
    bareSync(),
    {
      library: 'bare',
      variant: BARE_X100,
      kind: 'async',
      opsPerCall: IN_FLIGHT,
      prepare: () => inFlight(asyncTarget),
      check: allSettledOk,
    },
    {
      library: LIB.breakwater,
      variant: 'tryAcquire()',
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () => {
        const limiter = bwRateLimiter(bw);
        return () => limiter.tryAcquire();
      },
      check: admitted,
    },
    {
      library: LIB.breakwater,
      variant: 'acquire()',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const limiter = bwRateLimiter(bw);
        return () => limiter.acquire();
      },
      check: (o) => o.ok && o.value === undefined,
    },
    {
      library: LIB.breakwater,
      variant: 'pipeline(limiter).execute(target)',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = pipeline(bwRateLimiter(bw));
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
    {
      library: LIB.breakwater,
      variant: `acquire(), ${IN_FLIGHT} in flight`,
      kind: 'async',
      baseline: BARE_X100,
      opsPerCall: IN_FLIGHT,
      prepare: () => {
        const limiter = bwRateLimiter(bw);
        return inFlight(() => limiter.acquire());
      },
      check: allSettledOk,
    },
    {
      library: LIB.rlflex,
      variant: 'consume(key)',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const rl = rlflexLimiter();
        return () => rl.consume(KEY);
      },
      check: (o) => o.ok && o.value.remainingPoints > 0,
    },
    {
      library: LIB.rlflex,
      variant: 'consume(key).then(target)',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const rl = rlflexLimiter();
        const call = () => asyncTarget();
        return () => rl.consume(KEY).then(call);
      },
      check: isOne,
    },
    {
      library: LIB.rlflex,
      variant: `consume(key), ${IN_FLIGHT} in flight`,
      kind: 'async',
      baseline: BARE_X100,
      opsPerCall: IN_FLIGHT,
      prepare: () => {
        const rl = rlflexLimiter();
        return inFlight(() => rl.consume(KEY));
      },
      check: allSettledOk,
    },
    {
      library: LIB.bottleneck,
      variant: 'schedule(target)',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const limiter = bottleneckLimiter();
        return { op: () => limiter.schedule(asyncTarget), dispose: () => limiter.disconnect() };
      },
      check: isOne,
    },
    {
      library: LIB.bottleneck,
      variant: `schedule(target), ${IN_FLIGHT} in flight`,
      kind: 'async',
      baseline: BARE_X100,
      opsPerCall: IN_FLIGHT,
      prepare: () => {
        const limiter = bottleneckLimiter();
        return {
          op: inFlight(() => limiter.schedule(asyncTarget)),
          dispose: () => limiter.disconnect(),
        };
      },
      check: allSettledOk,
    },
    {
      library: LIB.breakwater,
      variant: `KeyedRateLimiter tryAcquire(key), ${KEY_COUNT.toLocaleString('en-US')} keys`,
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () => {
        const limiter = bwKeyedRateLimiter(bw);
        return cycling((key) => limiter.tryAcquire(key));
      },
      check: admitted,
    },
    {
      library: LIB.rlflex,
      variant: `consume(key), ${KEY_COUNT.toLocaleString('en-US')} keys`,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const rl = rlflexLimiter();
        return cycling((key) => rl.consume(key));
      },
      check: (o) => o.ok && o.value.remainingPoints > 0,
    },
  ];
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'rate-limiter-vs-rate-limiter-flexible',
    rank: 7,
    kind: 'ratio',
    label:
      'rate-limiter permit ≤ 1/5 of rate-limiter-flexible’s time (0 B: see the tryAcquire limit)',
    metric: 'overheadNs',
    minRatio: 5,
    ours: { scenario: 'rate-limiter', library: 'breakwater', variant: 'acquire()' },
    peers: [{ library: 'rate-limiter-flexible', variant: 'consume(key)' }],
  },
  {
    id: 'rate-limiter-try-acquire',
    rank: 12,
    kind: 'limit',
    label: 'in-memory rate limiter, tryAcquire call',
    scenario: 'rate-limiter',
    variant: 'tryAcquire()',
    limits: { nsPerOp: 20, bytesPerOp: 0 },
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ report, get }) {
  const L = 'rate-limiter';
  const rl = get(L, 'rate-limiter-flexible', 'consume(key)');
  if (rl) {
    const bn = get(L, 'bottleneck', 'schedule(target)');
    const bn100 = get(L, 'bottleneck', 'schedule(target), 100 in flight');
    let s = `A rate-limiter permit: rate-limiter-flexible's \`consume\` takes ${ns(rl.nsPerOp)} and ${bytes(rl.bytesPerOp)} per call`;
    if (bn) {
      s +=
        `; bottleneck's \`schedule\` takes ${ms(bn.nsPerOp)} per job one at a time` +
        `${bn100 ? ` and ${ms(bn100.nsPerOp)} per job with 100 in flight` : ''}, because its local ` +
        'datastore yields through `setTimeout(0)` at each step';
    }
    const tryAcq = get(L, 'breakwater', 'tryAcquire()');
    const acq = get(L, 'breakwater', 'acquire()');
    const keyedBw = report.rows.find(
      (r) =>
        r.scenario === L && r.library === 'breakwater' && r.variant.startsWith('KeyedRateLimiter'),
    );
    const keyedRl = report.rows.find(
      (r) =>
        r.scenario === L && r.library === 'rate-limiter-flexible' && r.variant.endsWith('keys'),
    );
    if (tryAcq && acq) {
      s +=
        `. breakwater's \`tryAcquire()\` decides in ${ns(tryAcq.nsPerOp)} and ${bytes(tryAcq.bytesPerOp)} (it returns a ` +
        `number, no promise); its promise-returning \`acquire()\` adds ${over(acq)} to an awaited call, ` +
        `against ${over(rl)} for \`consume\` (${ratio(rl, acq)})`;
      if (keyedBw && keyedRl) {
        s += `; with ${keyedBw.variant.split(', ')[1]}, ${ns(keyedBw.nsPerOp)} against ${ns(keyedRl.nsPerOp)}`;
      }
    }
    return `${s}.`;
  }
}
