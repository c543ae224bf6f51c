/**
 * A load shedder in front of an async call that always succeeds, so it never refuses: the cost
 * every call pays for the window (a coarse clock reading, a request and an accept counted, the
 * formula read), beside the static bulkhead of 100 (one gate too), against which it is judged.
 * No peer has a load shedder, so the scenario has no peer rows.
 */
import { bulkhead, loadShedder, pipeline } from '../lib/breakwater.mjs';
import { LIB } from '../lib/peers.mjs';
import { over } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Load shedder (SRE adaptive throttling), not refusing';
export const order = 5.5;

const BULKHEAD = 'bulkhead 100, execute, async target';
const SHEDDER = 'loadShedder, execute, async target';

export function rows() {
  // A build from before the load shedder has no row.
  if (loadShedder === undefined) return [];
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
      variant: SHEDDER,
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: BULKHEAD,
      prepare: () => {
        const p = pipeline(loadShedder());
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
  ];
}

export const budgets = [
  {
    id: 'load-shedder-vs-bulkhead',
    rank: 30,
    kind: 'versus',
    label: 'load shedder vs a static bulkhead, per call',
    metric: 'versusNs',
    limit: 10,
    rows: [{ scenario: 'load-shedder', variant: SHEDDER }],
  },
  {
    id: 'load-shedder-bytes',
    rank: 31,
    kind: 'versus',
    label: 'load shedder vs a static bulkhead, bytes per call',
    metric: 'versusBytes',
    limit: 0,
    rows: [{ scenario: 'load-shedder', variant: SHEDDER }],
  },
];

/** This scenario's paragraph in “What the numbers say”; none when its rows are absent. */
export function reading({ get }) {
  const S = 'load-shedder';
  const shedder = get(S, 'breakwater', SHEDDER);
  const bh = get(S, 'breakwater', BULKHEAD);
  if (shedder && bh) {
    return `A load shedder that refuses nothing adds ${over(shedder)} to an async call, a static bulkhead ${over(bh)}.`;
  }
}
