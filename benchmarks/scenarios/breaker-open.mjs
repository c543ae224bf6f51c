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
import { bytes, list, ns } from '../lib/prose.mjs';
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

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'open-rejection-vs-peers',
    rank: 4,
    kind: 'ratio',
    label: 'open-breaker refusal via tryExecute ≥ 100× cheaper than the peers’ throw',
    metric: 'overheadNs',
    minRatio: 100,
    // A tripped breaker (it must read the clock to know whether the break is over), as the
    // peers' are. Overheads over the bare call in the same loop: `await target()` for the
    // awaited tryExecute, `try { await target() } catch {}` for the peers' caught rejections.
    ours: { scenario: 'breaker-open', library: 'breakwater', variant: 'tryExecute, trip' },
    peers: [
      { library: 'cockatiel 4', variant: 'execute (rejects, caught), tripped by 5 failures' },
      { library: 'cockatiel 3', variant: 'execute (rejects, caught), tripped by 5 failures' },
      { library: 'opossum', variant: 'fire (rejects, caught), tripped by 1 failure' },
    ],
  },
  {
    id: 'open-breaker-try-forced',
    rank: 9,
    kind: 'limit',
    label: 'open breaker (forceOpen), tryExecute call',
    scenario: 'breaker-open',
    variant: 'tryExecute call only, forceOpen',
    limits: { nsPerOp: 30, bytesPerOp: 0 },
  },
  {
    id: 'open-breaker-try-tripped',
    rank: 10,
    kind: 'limit',
    label: 'open breaker (tripped), tryExecute call',
    scenario: 'breaker-open',
    variant: 'tryExecute call only, trip',
    limits: { nsPerOp: 30, bytesPerOp: 0 },
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const O = 'breaker-open';
  const tryTrip = get(O, 'breakwater', 'tryExecute, trip');
  if (tryTrip) {
    const callOnly = get(O, 'breakwater', 'tryExecute call only, trip');
    const throwing = get(O, 'breakwater', 'execute (rejects, caught), trip');
    let s =
      `An open breaker refusing a call: breakwater's awaited \`tryExecute\` takes ${ns(tryTrip.nsPerOp)} and ` +
      `${bytes(tryTrip.bytesPerOp)} in all (the call itself ${callOnly ? ns(callOnly.nsPerOp) : '–'}), against ` +
      list(
        [
          [
            'cockatiel 4',
            get(O, 'cockatiel 4', 'execute (rejects, caught), tripped by 5 failures'),
          ],
          [
            'cockatiel 3',
            get(O, 'cockatiel 3', 'execute (rejects, caught), tripped by 5 failures'),
          ],
          ['opossum', get(O, 'opossum', 'fire (rejects, caught), tripped by 1 failure')],
        ],
        (r) => `${ns(r.nsPerOp)} and ${bytes(r.bytesPerOp)}`,
      ) +
      ' for a caught rejection.';
    if (throwing) {
      s +=
        ` breakwater's own throwing \`execute\` costs ${ns(throwing.nsPerOp)}: a rejected promise and its \`catch\` ` +
        'are expensive in V8 whatever library makes them, while the peers add a fresh `Error` with a stack on top.';
    }
    return s;
  }
}

/** What costs the difference when a budget against the peers is missed, with figures from the same run. */
export function missNote({ get, missed }) {
  const clock = get('timeout', 'reference', 'performance.now()');
  if (missed.has('open-rejection-vs-peers')) {
    const tryTrip = get('breaker-open', 'breakwater', 'tryExecute, trip');
    const tryForced = get('breaker-open', 'breakwater', 'tryExecute, forceOpen');
    const callTrip = get('breaker-open', 'breakwater', 'tryExecute call only, trip');
    const callForced = get('breaker-open', 'breakwater', 'tryExecute call only, forceOpen');
    const ck = get(
      'breaker-open',
      'cockatiel 4',
      'execute (rejects, caught), tripped by 5 failures',
    );
    const thrown = get('breaker-open', 'reference', 'async throw new Error() (rejects, caught)');
    if (tryTrip && callTrip && callForced && ck) {
      return (
        `**Open-breaker refusal.** A tripped breaker refuses through \`tryExecute\` in ${ns(callTrip.nsPerOp)} ` +
        `(the call, not awaited) and ${bytes(callTrip.bytesPerOp)}; held open by hand (\`forceOpen\`), in ` +
        `${ns(callForced.nsPerOp)} and ${bytes(callForced.bytesPerOp)}. Neither reads the clock: a tripped ` +
        'breaker learns from a timer shared by all open breakers when its break may be over' +
        (clock ? ` (\`performance.now()\` would cost ${ns(clock.nsPerOp)} here)` : '') +
        '. Awaited, over the bare call, the tripped refusal adds ' +
        `${ns(tryTrip.overheadNs)}` +
        (tryForced ? ` and the forced one ${ns(tryForced.overheadNs)}` : '') +
        `; cockatiel 4's caught rejection adds ${ns(ck.overheadNs)}` +
        (thrown
          ? `, of which a bare async function throwing a new \`Error\` (caught) already costs ${ns(thrown.overheadNs)}`
          : '') +
        '.' +
        (tryForced && tryForced.overheadNs > 0 && ck.overheadNs / tryForced.overheadNs >= 100
          ? ' The forced-open path would meet the 100× budget; the tripped one, which the peers’ state matches, does not.'
          : '')
      );
    }
  }
}
