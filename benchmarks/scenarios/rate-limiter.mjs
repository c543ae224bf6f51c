/**
 * Taking a rate-limiter permit while permits are available: rate-limiter-flexible's
 * `RateLimiterMemory.consume` with so many points the limit is never reached, and bottleneck's
 * `schedule` with `maxConcurrent: 100, minTime: 0`; one call in flight, and 100 in flight at
 * once. breakwater has no rate limiter yet: its row is reported as not implemented.
 */
import { bottleneckLimiter, LIB, rlflexLimiter } from '../lib/peers.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Rate limiter, permit available';
export const order = 9;

/** Libraries without a row here, and why. */
export const notImplemented = [
  { library: LIB.breakwater, reason: 'n/a (not yet implemented): breakwater has no rate limiter' },
];

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

export function rows() {
  return [
    bareAsync(),
    {
      library: 'bare',
      variant: BARE_X100,
      kind: 'async',
      opsPerCall: IN_FLIGHT,
      prepare: () => inFlight(asyncTarget),
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
  ];
}
