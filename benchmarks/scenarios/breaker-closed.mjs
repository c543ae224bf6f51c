/**
 * A closed circuit breaker (5 consecutive failures, 10 s break) on the happy path, with an
 * async and a sync target, and as a method decorator on an async method next to the same
 * pipeline called with a closure per call. Peers: cockatiel 4 and 3 (`ConsecutiveBreaker(5)`),
 * opossum with `timeout: false` and with its defaults (a 10 s timer per call).
 */

import { breakerPeerRows } from '../lib/peer-rows.mjs';
import { LIB, opBreakerDefaults, shutdown } from '../lib/peers.mjs';
import {
  breakerPipeline,
  decoratedBreakerService,
  hasDecorators,
  plainService,
} from '../lib/pipelines.mjs';
import { bytes, decoratedText, list, ns, over } from '../lib/prose.mjs';
import {
  BARE_ASYNC,
  BARE_AWAIT_SYNC,
  BARE_SYNC,
  bareAsync,
  bareAwaitSync,
  bareSync,
  DIRECT_CLOSURE,
  isOne,
  referenceThen,
} from '../lib/rows.mjs';
import { asyncTarget, syncTarget } from '../lib/targets.mjs';

export const title = 'Circuit breaker, closed';
export const order = 1;

const TARGETS = [
  { name: 'async target', target: asyncTarget, baseline: BARE_ASYNC },
  { name: 'sync target', target: syncTarget, baseline: BARE_AWAIT_SYNC },
];

export function rows() {
  const out = [bareAsync(), bareAwaitSync(), bareSync(), referenceThen()];
  for (const { name, target, baseline } of TARGETS) {
    out.push({
      library: LIB.breakwater,
      variant: `execute, ${name}`,
      kind: 'async',
      baseline,
      prepare: () => {
        const p = breakerPipeline();
        return () => p.execute(target);
      },
      check: isOne,
    });
  }
  out.push({
    library: LIB.breakwater,
    variant: 'executeSync, sync target',
    kind: 'sync',
    baseline: BARE_SYNC,
    prepare: () => {
      const p = breakerPipeline();
      return () => p.executeSync(syncTarget);
    },
    check: isOne,
  });
  // What code without decorators writes: the reference the decorated row is judged against.
  out.push({
    library: LIB.breakwater,
    variant: DIRECT_CLOSURE,
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const p = breakerPipeline();
      const service = plainService();
      return () => p.execute(() => service.call());
    },
    check: isOne,
  });
  if (hasDecorators) {
    out.push({
      library: LIB.breakwater,
      variant: 'decorated async method (@circuitBreaker)',
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: DIRECT_CLOSURE,
      prepare: () => {
        const service = decoratedBreakerService();
        return () => service.call();
      },
      check: isOne,
    });
  }
  out.push(...breakerPeerRows(TARGETS, { polluted: false, quick: false, cleanOf: null }));
  out.push({
    library: LIB.opossum,
    variant: 'fire, async target (all defaults: a 10 s timer per call)',
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const b = opBreakerDefaults(asyncTarget);
      return { op: () => b.fire(), dispose: () => shutdown(b) };
    },
    check: isOne,
  });
  return out;
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'closed-breaker-vs-cockatiel',
    rank: 1,
    kind: 'ratio',
    label: 'closed breaker overhead ≤ 1/4 of cockatiel’s',
    metric: 'overheadNs',
    minRatio: 4,
    ours: { scenario: 'breaker-closed', library: 'breakwater', variant: 'execute, async target' },
    peers: [
      { library: 'cockatiel 4', variant: 'execute, async target' },
      { library: 'cockatiel 3', variant: 'execute, async target' },
    ],
  },
  {
    id: 'closed-breaker',
    rank: 8,
    kind: 'limit',
    label: 'closed breaker, execute: over bare await',
    scenario: 'breaker-closed',
    variant: 'execute, async target',
    limits: { overheadNs: 30, overheadBytes: 150 },
  },
  {
    id: 'sync-breaker',
    rank: 14,
    kind: 'limit',
    label: 'sync breaker path, executeSync',
    scenario: 'breaker-closed',
    variant: 'executeSync, sync target',
    limits: { bytesPerOp: 0 },
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const S = 'breaker-closed';
  const closed = get(S, 'breakwater', 'execute, async target');
  if (closed) {
    const then = get(S, 'reference', 'await target().then(ok, err)');
    const sync = get(S, 'breakwater', 'executeSync, sync target');
    let s =
      `A closed circuit breaker: breakwater adds ${over(closed)} to an awaited async call; ` +
      list(
        [
          ['cockatiel 4', get(S, 'cockatiel 4', 'execute, async target')],
          ['cockatiel 3', get(S, 'cockatiel 3', 'execute, async target')],
          ['opossum', get(S, 'opossum', 'fire, async target (timeout: false)')],
          [
            'opossum with its defaults',
            get(S, 'opossum', 'fire, async target (all defaults: a 10 s timer per call)'),
          ],
        ],
        over,
      ) +
      '.';
    if (then) {
      s +=
        ` One \`.then(ok, err)\` on the target's promise, the least any wrapper that must see an async outcome ` +
        `adds, costs ${over(then)} by itself.`;
    }
    if (sync) {
      s += ` With a sync target, \`executeSync\` takes ${ns(sync.nsPerOp)} per call and allocates ${bytes(sync.bytesPerOp)}; the peers have no sync path.`;
    }
    const decorated = get(S, 'breakwater', 'decorated async method (@circuitBreaker)');
    if (decorated) {
      const direct = get(S, 'breakwater', decorated.versus);
      s += ` As \`@circuitBreaker\` on an async method the breaker adds ${decoratedText(decorated, direct)}.`;
    }
    return s;
  }
}

/** What costs the difference when a budget against the peers is missed, with figures from the same run. */
export function missNote({ report, get, missed }) {
  const then = get('breaker-closed', 'reference', 'await target().then(ok, err)');
  if (missed.has('closed-breaker-vs-cockatiel') || missed.has('closed-breaker')) {
    const bw = get('breaker-closed', 'breakwater', 'execute, async target');
    const ck = get('breaker-closed', 'cockatiel 4', 'execute, async target');
    const sync = get('breaker-closed', 'breakwater', 'executeSync, sync target');
    const own = report.budgets
      .find((b) => b.id === 'closed-breaker')
      ?.checks.find((c) => c.metric === 'overheadNs');
    if (bw && then && ck) {
      const limit = ck.overheadNs / 4;
      const room = limit - then.overheadNs;
      return (
        `**Closed breaker vs cockatiel.** breakwater adds ${ns(bw.overheadNs)}; a quarter of cockatiel 4's ` +
        `${ns(ck.overheadNs)} is ${ns(ck.overheadNs / 4)}. A promise-returning \`execute\` must see the ` +
        'outcome of the target’s promise, which takes at least one derived promise and its reaction: ' +
        `\`await target().then(ok, err)\` alone adds ${ns(then.overheadNs)} and ${bytes(then.overheadBytes)}. ` +
        `The breaker’s own work (admission, outcome, window) is the rest: about ` +
        `${ns(bw.overheadNs - then.overheadNs)} and ${bytes(bw.overheadBytes - then.overheadBytes)}. ` +
        (room > 0
          ? `To meet the budget the breaker would have to fit in ${ns(room)} on top of that reaction.`
          : 'That reaction alone already exceeds the budget.') +
        (sync && sync.nsPerOp <= limit
          ? ` Without a promise the budget is met: \`executeSync\` takes ${ns(sync.nsPerOp)} per call in all.`
          : '') +
        (own?.pass === false
          ? ` The library's own limit of ${ns(own.limit)} over the bare call is missed by ` +
            `${ns(own.value - own.limit)} for the same reason.`
          : '')
      );
    }
  }
}
