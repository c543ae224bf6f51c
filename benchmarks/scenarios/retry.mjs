/**
 * Retry (3 retries, exponential backoff) whose first attempt succeeds. Peers: cockatiel 4 and
 * 3 (`maxAttempts: 3` counts retries), p-retry (`retries: 3`). Also the same retry spending
 * from a retry budget, against the retry without one.
 */
import { COCKATIELS, ckRetry, LIB, PRETRY_OPTIONS, pRetry } from '../lib/peers.mjs';
import { budgetedRetryPipeline, hasRetryBudget, retryPipeline } from '../lib/pipelines.mjs';
import { bytes, list, ns, over, plus } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Retry, first attempt succeeds';
export const order = 3;

const RETRY = 'execute, maxAttempts 4 (3 retries)';
const BUDGETED = 'execute, maxAttempts 4 (3 retries), retry budget';

export function rows() {
  const out = [
    bareAsync(),
    {
      library: LIB.breakwater,
      variant: RETRY,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = retryPipeline();
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
  ];
  if (hasRetryBudget) {
    out.push({
      library: LIB.breakwater,
      variant: BUDGETED,
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: RETRY,
      prepare: () => {
        const p = budgetedRetryPipeline();
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    });
  }
  for (const { library, ck } of COCKATIELS) {
    out.push({
      library,
      variant: 'execute, maxAttempts 3 (3 retries)',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = ckRetry(ck);
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    });
  }
  out.push({
    library: LIB.pRetry,
    variant: 'pRetry, retries 3',
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => () => pRetry(asyncTarget, PRETRY_OPTIONS),
    check: isOne,
  });
  return out;
}

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const R = 'retry';
  const retry = get(R, 'breakwater', RETRY);
  const budgeted = get(R, 'breakwater', BUDGETED);
  const budget = budgeted
    ? ` With a retry budget (default model) the same retry costs ${plus(budgeted.versusNs, ns)} and ${plus(budgeted.versusBytes, bytes)} over it.`
    : '';
  if (retry) {
    return (
      `A retry whose first attempt succeeds: breakwater ${over(retry)}; ` +
      list(
        [
          ['cockatiel 4', get(R, 'cockatiel 4', 'execute, maxAttempts 3 (3 retries)')],
          ['cockatiel 3', get(R, 'cockatiel 3', 'execute, maxAttempts 3 (3 retries)')],
          ['p-retry', get(R, 'p-retry', 'pRetry, retries 3')],
        ],
        over,
      ) +
      '.' +
      budget
    );
  }
}

/** Budgets judged on this scenario's rows (see lib/budgets.mjs); `rank` orders the report's lists. */
export const budgets = [
  {
    id: 'retry-budget-vs-retry-ns',
    rank: 16.5,
    kind: 'versus',
    label: 'retry with a retry budget vs the same retry without one, first attempt succeeds',
    metric: 'versusNs',
    limit: 5,
    rows: [{ scenario: 'retry', variant: BUDGETED }],
  },
  {
    id: 'retry-budget-vs-retry-bytes',
    rank: 16.6,
    kind: 'versus',
    label: 'retry with a retry budget vs the same retry without one: bytes',
    metric: 'versusBytes',
    limit: 0,
    rows: [{ scenario: 'retry', variant: BUDGETED }],
  },
];
