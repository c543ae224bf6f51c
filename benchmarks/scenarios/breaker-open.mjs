/**
 * An open circuit breaker refusing calls. breakwater: through `execute` (a rejected promise,
 * caught) and through `tryExecute` (a result object, never rejects); the breaker is either
 * held open with `forceOpen()` or tripped with `trip()` and a break that outlasts the run (a
 * tripped breaker must check the clock to know whether the break is over). Peers have only
 * the throwing API: cockatiel 4 and 3 tripped by 5 failures, opossum tripped by one failure
 * (its rolling window opens at 50 % errors).
 */
import { isBrokenCircuitError } from '../lib/breakwater.mjs';
import { COCKATIELS, ckOpenBreaker, LIB, opOpenBreaker, shutdown } from '../lib/peers.mjs';
import { openPipeline } from '../lib/pipelines.mjs';
import {
  BARE_ASYNC,
  BARE_ASYNC_CATCH,
  BARE_SYNC,
  bareAsync,
  bareAsyncCatch,
  bareSync,
  REFERENCE,
} from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Circuit breaker, open (refusing)';
export const order = 2;

const failing = async () => {
  throw new Error('dependency down');
};

const refused = (o) => !o.ok && isBrokenCircuitError(o.error);
const refusedResult = (o) => o.ok && o.value.ok === false && o.value.rejected === true;
/** Any rejection: the peers' own open-circuit errors. */
const rejected = (o) => !o.ok && o.error instanceof Error;

function executeRow(how) {
  return {
    library: LIB.breakwater,
    variant: `execute (rejects, caught), ${how}`,
    kind: 'async-catch',
    baseline: BARE_ASYNC_CATCH,
    prepare: () => {
      const p = openPipeline(how);
      return () => p.execute(asyncTarget);
    },
    check: refused,
  };
}

function tryAwaited(how) {
  return {
    library: LIB.breakwater,
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
    library: LIB.breakwater,
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
  const out = [
    bareAsyncCatch(),
    bareAsync(),
    bareSync(),
    {
      // What any refusal that throws a fresh error from an async function costs, library aside.
      library: REFERENCE,
      variant: 'async throw new Error() (rejects, caught)',
      kind: 'async-catch',
      baseline: BARE_ASYNC_CATCH,
      prepare: () => failing,
      check: rejected,
    },
    executeRow('forceOpen'),
    executeRow('trip'),
    tryAwaited('forceOpen'),
    tryAwaited('trip'),
    tryCallOnly('forceOpen'),
    tryCallOnly('trip'),
  ];
  for (const { library, ck } of COCKATIELS) {
    out.push({
      library,
      variant: 'execute (rejects, caught), tripped by 5 failures',
      kind: 'async-catch',
      baseline: BARE_ASYNC_CATCH,
      prepare: async () => {
        const p = ckOpenBreaker(ck);
        for (let i = 0; i < 5; i++) await p.execute(failing).catch(() => {});
        if (p.state !== ck.CircuitState.Open) throw new Error(`${library} breaker did not open`);
        return () => p.execute(asyncTarget);
      },
      check: (o) => rejected(o) && o.error instanceof ck.BrokenCircuitError,
    });
  }
  out.push({
    library: LIB.opossum,
    variant: 'fire (rejects, caught), tripped by 1 failure',
    kind: 'async-catch',
    baseline: BARE_ASYNC_CATCH,
    prepare: async () => {
      let fail = true;
      const b = opOpenBreaker(() => (fail ? failing() : asyncTarget()));
      await b.fire().catch(() => {});
      fail = false;
      if (!b.opened) throw new Error('opossum breaker did not open');
      return { op: () => b.fire(), dispose: () => shutdown(b) };
    },
    check: (o) => rejected(o) && o.error.code === 'EOPENBREAKER',
  });
  return out;
}
