/**
 * An open circuit breaker refusing calls: through `execute` (a rejected promise, caught) and
 * through `tryExecute` (a result object, never rejects). The breaker is either held open with
 * `forceOpen()` or tripped with `trip()` and a break that outlasts the run; a tripped breaker
 * must check the clock to know whether the break is over.
 */
import { circuitBreaker, isBrokenCircuitError, pipeline } from '../lib/breakwater.mjs';
import {
  BARE_ASYNC,
  BARE_ASYNC_CATCH,
  BARE_SYNC,
  bareAsync,
  bareAsyncCatch,
  bareSync,
} from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Circuit breaker, open (refusing)';
export const order = 2;

const MAX_BREAK = 2_147_483_647;

function openPipeline(how) {
  const breaker = circuitBreaker({
    window: { kind: 'consecutive', threshold: 5 },
    breakDuration: MAX_BREAK,
  });
  if (how === 'forceOpen') breaker.forceOpen();
  else breaker.trip();
  return pipeline(breaker);
}

const refused = (o) => !o.ok && isBrokenCircuitError(o.error);
const refusedResult = (o) => o.ok && o.value.ok === false && o.value.rejected === true;

function tryAwaited(how) {
  return {
    library: 'breakwater',
    variant: `tryExecute, ${how}`,
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const p = openPipeline(how);
      return () => p.tryExecute(asyncTarget);
    },
    check: refusedResult,
  };
}

/**
 * The call alone, not awaited: what the library spends to refuse. Awaiting the returned
 * (already settled) promise is the caller's cost and is in the awaited rows.
 */
function tryCallOnly(how) {
  let last;
  return {
    library: 'breakwater',
    variant: `tryExecute call only, ${how}`,
    kind: 'sync',
    baseline: BARE_SYNC,
    prepare: () => {
      const p = openPipeline(how);
      return () => {
        last = p.tryExecute(asyncTarget);
      };
    },
    check: async () => refusedResult({ ok: true, value: await last }),
  };
}

export function rows() {
  return [
    bareAsyncCatch(),
    bareAsync(),
    bareSync(),
    {
      library: 'breakwater',
      variant: 'execute (rejects, caught), forceOpen',
      kind: 'async-catch',
      baseline: BARE_ASYNC_CATCH,
      prepare: () => {
        const p = openPipeline('forceOpen');
        return () => p.execute(asyncTarget);
      },
      check: refused,
    },
    tryAwaited('forceOpen'),
    tryAwaited('trip'),
    tryCallOnly('forceOpen'),
    tryCallOnly('trip'),
  ];
}
