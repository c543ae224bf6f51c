/**
 * retry + breaker + timeout (1000 ms, cooperative) + bulkhead (100) in one breakwater
 * pipeline, and as breakwater method decorators on an async method (when the build has
 * them); cockatiel 4 and 3 `wrap(retry, breaker, bulkhead, timeout)`; opossum (timeout 1000,
 * capacity 100) driven by p-retry (3 retries).
 */
import { composedPeerRows } from '../lib/peer-rows.mjs';
import { LIB } from '../lib/peers.mjs';
import {
  composedPipeline,
  decoratedService,
  hasDecorators,
  plainService,
} from '../lib/pipelines.mjs';
import { decoratedText, list, ns, over, ratio } from '../lib/prose.mjs';
import {
  BARE_ASYNC,
  BARE_AWAIT_SYNC,
  bareAsync,
  bareAwaitSync,
  DIRECT_CLOSURE,
  isOne,
} from '../lib/rows.mjs';
import { asyncTarget, syncTarget } from '../lib/targets.mjs';

export const title = 'Composed: retry + breaker + timeout + bulkhead';
export const order = 6;

export function rows({ quick }) {
  return [
    bareAsync(),
    bareAwaitSync(),
    {
      library: LIB.breakwater,
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = composedPipeline();
        return { op: () => p.execute(asyncTarget), dispose: () => p.dispose() };
      },
      check: isOne,
    },
    {
      library: LIB.breakwater,
      variant: 'execute, sync target',
      kind: 'async',
      baseline: BARE_AWAIT_SYNC,
      prepare: () => {
        const p = composedPipeline();
        return { op: () => p.execute(syncTarget), dispose: () => p.dispose() };
      },
      check: isOne,
    },
    // What code without decorators writes: the reference the decorated row is judged against.
    {
      library: LIB.breakwater,
      variant: DIRECT_CLOSURE,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = composedPipeline();
        const service = plainService();
        return { op: () => p.execute(() => service.call()), dispose: () => p.dispose() };
      },
      check: isOne,
    },
    ...(hasDecorators
      ? [
          {
            library: LIB.breakwater,
            variant: 'decorated async method (@retry @circuitBreaker @timeout @bulkhead)',
            kind: 'async',
            baseline: BARE_ASYNC,
            versus: DIRECT_CLOSURE,
            prepare: () => {
              const service = decoratedService();
              return () => service.call();
            },
            check: isOne,
          },
        ]
      : []),
    ...composedPeerRows(BARE_ASYNC, asyncTarget, { polluted: false, quick, cleanOf: null }),
  ];
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'composed-vs-cockatiel',
    rank: 2,
    kind: 'ratio',
    label: 'composed pipeline overhead ≥ 50× below cockatiel `wrap`',
    metric: 'overheadNs',
    minRatio: 50,
    ours: { scenario: 'composed', library: 'breakwater', variant: 'execute, async target' },
    peers: [
      { library: 'cockatiel 4', variant: 'wrap(retry, breaker, bulkhead, timeout), async target' },
      { library: 'cockatiel 3', variant: 'wrap(retry, breaker, bulkhead, timeout), async target' },
    ],
  },
  {
    id: 'composed-vs-opossum-p-retry',
    rank: 3,
    kind: 'ratio',
    label: 'composed pipeline overhead ≥ 30× below opossum + p-retry',
    metric: 'overheadNs',
    minRatio: 30,
    ours: { scenario: 'composed', library: 'breakwater', variant: 'execute, async target' },
    peers: [
      { library: 'opossum + p-retry', variant: 'pRetry(() => breaker.fire()), async target' },
    ],
  },
  {
    id: 'composed',
    rank: 11,
    kind: 'limit',
    label: 'composed four-policy pipeline: over bare await',
    scenario: 'composed',
    variant: 'execute, async target',
    limits: { overheadNs: 150, overheadBytes: 300 },
  },
  {
    id: 'decorated-vs-direct',
    rank: 15,
    kind: 'versus',
    label: 'decorated method vs the same pipeline called directly',
    metric: 'versusNs',
    limit: 10,
    rows: [
      {
        scenario: 'composed',
        variant: 'decorated async method (@retry @circuitBreaker @timeout @bulkhead)',
      },
      { scenario: 'breaker-closed', variant: 'decorated async method (@circuitBreaker)' },
    ],
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const C = 'composed';
  const composed = get(C, 'breakwater', 'execute, async target');
  if (composed) {
    const ck4 = get(C, 'cockatiel 4', 'wrap(retry, breaker, bulkhead, timeout), async target');
    const ck3 = get(C, 'cockatiel 3', 'wrap(retry, breaker, bulkhead, timeout), async target');
    const op = get(C, 'opossum + p-retry', 'pRetry(() => breaker.fire()), async target');
    let s =
      `All four policies composed: breakwater's pipeline adds ${over(composed)} to an async call; ` +
      list(
        [
          ['cockatiel 4 `wrap`', ck4],
          ['cockatiel 3 `wrap`', ck3],
          ['opossum driven by p-retry', op],
        ],
        over,
      ) +
      `, that is ${ratio(ck4, composed)}, ${ratio(ck3, composed)} and ${ratio(op, composed)} breakwater's overhead.`;
    const rps = 10_000;
    const cpuMs = (composed.overheadNs * rps) / 1e6;
    s +=
      ` At ${rps.toLocaleString('en-US')} calls per second breakwater's pipeline costs about ${cpuMs.toFixed(1)} ms of CPU ` +
      `per second (${(cpuMs / 10).toFixed(2)} % of one core)`;
    if (ck4) {
      const ckMs = (ck4.overheadNs * rps) / 1e6;
      s += `, cockatiel 4's about ${ckMs.toFixed(0)} ms (${(ckMs / 10).toFixed(1)} %)`;
    }
    s += '.';
    const decorated = get(
      C,
      'breakwater',
      'decorated async method (@retry @circuitBreaker @timeout @bulkhead)',
    );
    if (decorated) {
      const direct = get(C, 'breakwater', decorated.versus);
      s += ` Stacked as method decorators on an async method, the same four policies add ${decoratedText(decorated, direct)}.`;
    }
    return s;
  }
}

/** What costs the difference when a budget against the peers is missed, with figures from the same run. */
export function missNote({ get, missed }) {
  if (missed.has('composed-vs-cockatiel') || missed.has('composed-vs-opossum-p-retry')) {
    const c = get('composed', 'breakwater', 'execute, async target');
    const parts = [
      ['retry', get('retry', 'breakwater', 'execute, maxAttempts 4 (3 retries)')],
      ['breaker', get('breaker-closed', 'breakwater', 'execute, async target')],
      ['timeout', get('timeout', 'breakwater', 'execute, cooperative')],
      ['bulkhead', get('bulkhead', 'breakwater', 'execute, async target')],
    ];
    if (c && parts.every(([, r]) => r !== undefined)) {
      const largest = parts.reduce((a, b) => (b[1].overheadNs > a[1].overheadNs ? b : a))[0];
      return (
        `**Composed pipeline.** breakwater's four policies add ${ns(c.overheadNs)} together; alone they add ` +
        `${parts.map(([name, r]) => `${name} ${ns(r.overheadNs)}`).join(', ')}. Each single-policy figure ` +
        'includes the derived promise every async wrapper pays, which the pipeline pays once. The largest ' +
        `share is the ${largest}'s.`
      );
    }
  }
}

/** What is known when a budget of breakwater's own is missed, with figures from the same run. */
export function ownMissNote({ missed }) {
  if (missed.has('decorated-vs-direct')) {
    return (
      '**Decorated method vs the pipeline called directly.** A decorated call goes through the ' +
      'method’s wrapper (its plan lookup and argument-count check) and a closure that captures ' +
      '`this`, where the direct call makes a closure over a local object.'
    );
  }
}
