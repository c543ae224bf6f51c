/**
 * An adaptive concurrency limit in front of an async call that always succeeds, so it never
 * refuses: the cost every call pays for admission, release and its sample (two coarse clock
 * readings, the in-flight count summed over time, the call counted; the window's decision runs
 * about once a second), beside the static bulkhead of 100 (one gate too), against which it is
 * judged. No peer has an adaptive limit, so the scenario has no peer rows.
 */
import { adaptiveLimit, bulkhead, pipeline } from '../lib/breakwater.mjs';
import { LIB } from '../lib/peers.mjs';
import { over } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Adaptive concurrency limit, not refusing';
export const order = 5.6;

const BULKHEAD = 'bulkhead 100, execute, async target';
const LIMIT = 'adaptiveLimit, execute, async target';

export function rows() {
  // A build from before the adaptive limit has no row.
  if (adaptiveLimit === undefined) return [];
  return [
    bareAsync(),
    {
      library: LIB.breakwater,
      variant: BULKHEAD,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = pipeline(bulkhead({ maxConcurrent: 100, maxQueue: 0 }));
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
    {
      library: LIB.breakwater,
      variant: LIMIT,
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: BULKHEAD,
      prepare: () => {
        const p = pipeline(adaptiveLimit());
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
  ];
}

export const budgets = [
  {
    id: 'adaptive-limit-vs-bulkhead',
    rank: 36,
    kind: 'versus',
    label: 'adaptive limit vs a static bulkhead, per call',
    metric: 'versusNs',
    limit: 15,
    rows: [{ scenario: 'adaptive-limit', variant: LIMIT }],
  },
  {
    id: 'adaptive-limit-bytes',
    rank: 37,
    kind: 'versus',
    label: 'adaptive limit vs a static bulkhead, bytes per call',
    metric: 'versusBytes',
    limit: 0,
    rows: [{ scenario: 'adaptive-limit', variant: LIMIT }],
  },
];

/** This scenario's paragraph in “What the numbers say”; none when its rows are absent. */
export function reading({ get }) {
  const S = 'adaptive-limit';
  const limit = get(S, 'breakwater', LIMIT);
  const bh = get(S, 'breakwater', BULKHEAD);
  if (limit && bh) {
    return `An adaptive limit that refuses nothing adds ${over(limit)} to an async call, a static bulkhead ${over(bh)}.`;
  }
}
