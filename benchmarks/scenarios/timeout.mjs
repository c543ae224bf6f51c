/**
 * A 1000 ms timeout around a call that succeeds at once. breakwater and cockatiel 4 and 3 in
 * both strategies; opossum's `timeout: 1000` (its breaker included: it has no standalone
 * timeout). The reference rows price the platform calls a timeout may make per call.
 */
import { COCKATIELS, ckTimeout, LIB, opTimeout, shutdown } from '../lib/peers.mjs';
import { timeoutPipeline } from '../lib/pipelines.mjs';
import { bytes, list, ns, over, plus } from '../lib/prose.mjs';
import { BARE_ASYNC, BARE_SYNC, bareAsync, bareSync, isOne, REFERENCE } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Timeout 1000 ms, succeeds at once';
export const order = 4;

const STRATEGIES = ['cooperative', 'aggressive'];
const noop = () => {};

/** A sync reference row; `make` returns the op. */
function reference(variant, make) {
  return {
    library: REFERENCE,
    variant,
    kind: 'sync',
    baseline: BARE_SYNC,
    prepare: make,
    check: (o) => o.ok,
  };
}

export function rows() {
  const out = [
    bareAsync(),
    bareSync(),
    reference('performance.now()', () => () => performance.now()),
    reference('setTimeout(1000) + clearTimeout', () => () => clearTimeout(setTimeout(noop, 1000))),
    reference('timer.ref() + timer.unref(), no other timer', () => {
      const t = setTimeout(noop, 2_000_000_000);
      t.unref();
      return {
        op: () => {
          t.ref();
          t.unref();
        },
        dispose: () => clearTimeout(t),
      };
    }),
  ];
  for (const strategy of STRATEGIES) {
    out.push({
      library: LIB.breakwater,
      variant: `execute, ${strategy}`,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = timeoutPipeline(strategy);
        return { op: () => p.execute(asyncTarget), dispose: () => p.dispose() };
      },
      check: isOne,
    });
  }
  for (const { library, ck } of COCKATIELS) {
    for (const strategy of STRATEGIES) {
      out.push({
        library,
        variant: `execute, ${strategy}`,
        kind: 'async',
        baseline: BARE_ASYNC,
        prepare: () => {
          const p = ckTimeout(ck, strategy);
          return () => p.execute(asyncTarget);
        },
        check: isOne,
      });
    }
  }
  out.push({
    library: LIB.opossum,
    variant: 'fire, timeout 1000 (breaker included)',
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const b = opTimeout(asyncTarget);
      return { op: () => b.fire(), dispose: () => shutdown(b) };
    },
    check: isOne,
  });
  return out;
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'timeout-vs-opossum-cooperative',
    rank: 5,
    kind: 'ratio',
    label: 'timeout overhead ≥ 5× below opossum’s (cooperative)',
    metric: 'overheadNs',
    minRatio: 5,
    ours: { scenario: 'timeout', library: 'breakwater', variant: 'execute, cooperative' },
    peers: [{ library: 'opossum', variant: 'fire, timeout 1000 (breaker included)' }],
  },
  {
    id: 'timeout-vs-opossum-aggressive',
    rank: 6,
    kind: 'ratio',
    label: 'timeout overhead ≥ 5× below opossum’s (aggressive)',
    metric: 'overheadNs',
    minRatio: 5,
    ours: { scenario: 'timeout', library: 'breakwater', variant: 'execute, aggressive' },
    peers: [{ library: 'opossum', variant: 'fire, timeout 1000 (breaker included)' }],
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const T = 'timeout';
  const coop = get(T, 'breakwater', 'execute, cooperative');
  const aggr = get(T, 'breakwater', 'execute, aggressive');
  if (coop && aggr) {
    return (
      `A 1000 ms timeout around a call that succeeds at once: breakwater ${over(coop)} (cooperative) and ` +
      `${over(aggr)} (aggressive); ` +
      list(
        [
          ['cockatiel 4 cooperative', get(T, 'cockatiel 4', 'execute, cooperative')],
          ['aggressive', get(T, 'cockatiel 4', 'execute, aggressive')],
          ['cockatiel 3 cooperative', get(T, 'cockatiel 3', 'execute, cooperative')],
          ['aggressive', get(T, 'cockatiel 3', 'execute, aggressive')],
          [
            'opossum (breaker included)',
            get(T, 'opossum', 'fire, timeout 1000 (breaker included)'),
          ],
        ],
        over,
      ) +
      '. cockatiel builds an AbortController, a timer and listeners per call and aborts the signal on ' +
      'every successful return; breakwater shares one timer between all calls of a policy.'
    );
  }
}

/** What costs the difference when a budget against the peers is missed, with figures from the same run. */
export function missNote({ get, missed }) {
  const then = get('breaker-closed', 'reference', 'await target().then(ok, err)');
  const clock = get('timeout', 'reference', 'performance.now()');
  if (missed.has('timeout-vs-opossum-cooperative') || missed.has('timeout-vs-opossum-aggressive')) {
    const coop = get('timeout', 'breakwater', 'execute, cooperative');
    const aggr = get('timeout', 'breakwater', 'execute, aggressive');
    const op = get('timeout', 'opossum', 'fire, timeout 1000 (breaker included)');
    if (coop && aggr && op) {
      let s =
        `**Timeout vs opossum.** opossum's timeout (its breaker included) adds ${ns(op.overheadNs)}, so the ` +
        `budget allows ${ns(op.overheadNs / 5)}; breakwater adds ${ns(coop.overheadNs)} (cooperative) and ` +
        `${ns(aggr.overheadNs)} (aggressive). A cooperative timeout reads no clock per call` +
        `${clock ? ` (a reading would cost ${ns(clock.nsPerOp)})` : ''}: it records the call in the policy's shared ` +
        'queue, stamped at the next tick of its one timer, reuses a pooled execution record whose promise ' +
        'handlers are bound once, and allocates only the small context the function receives ' +
        `(${plus(coop.overheadBytes, bytes)} in all)` +
        `${then ? `, on top of the derived promise any async wrapper pays (${ns(then.overheadNs)})` : ''}.`;
      s +=
        ` The aggressive strategy costs ${plus(aggr.overheadNs - coop.overheadNs, ns)} and ` +
        `${plus(aggr.overheadBytes - coop.overheadBytes, bytes)} more: an outer promise the call can settle ` +
        'before the function does, and its two settle functions.';
      return s;
    }
  }
}
