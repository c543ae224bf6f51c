/**
 * A hedge (one hedge after 2 s) around a call whose first attempt answers at once. No peer in
 * JavaScript hedges, so the row stands alone; Polly v8 (.NET) reports 394.6 ns and 0 B for its
 * whole call where the primary wins.
 */
import { hedgePipeline } from '../lib/pipelines.mjs';
import { bytes, ns, over } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Hedge, first attempt wins';
export const order = 4.5;

const VARIANT = 'execute, maxHedges 1, delay 2000';

export function rows() {
  return [
    bareAsync(),
    {
      library: 'breakwater',
      variant: VARIANT,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = hedgePipeline();
        return { op: () => p.execute(asyncTarget), dispose: () => p.dispose() };
      },
      check: isOne,
    },
  ];
}

/**
 * Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists.
 * A hedge must be able to settle its call before the first attempt ends: a promise of its own
 * (about 216 B), the structure of the aggressive timeout, which is the floor. So the hedge is
 * judged over the aggressive timeout's row of the same run, not over a bare await.
 */
export const budgets = [
  {
    id: 'hedge-first-wins',
    rank: 19,
    kind: 'limit',
    label: 'hedge, first attempt wins: over the aggressive timeout',
    scenario: 'hedge',
    variant: VARIANT,
    over: { scenario: 'timeout', variant: 'execute, aggressive' },
    limits: { overheadNs: 100, overheadBytes: 50 },
  },
];

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const h = get('hedge', 'breakwater', VARIANT);
  if (h) {
    return (
      `A hedge whose first attempt answers at once: breakwater ${over(h)}. The call's first ` +
      'attempt runs as a pooled execution record of the steps inside the hedge, raced by a pooled ' +
      'race record; its hedge timer is an entry in the policy’s one queue, stamped at the next ' +
      `tick of its timer, so no clock is read per call. Polly v8 (.NET) reports ${ns(394.6)} and ` +
      `${bytes(0)} for its whole call in the same case.`
    );
  }
}
