/**
 * Retry (3 retries, exponential backoff) whose first attempt succeeds. Peers: cockatiel 4 and
 * 3 (`maxAttempts: 3` counts retries), p-retry (`retries: 3`).
 */
import { COCKATIELS, ckRetry, LIB, PRETRY_OPTIONS, pRetry } from '../lib/peers.mjs';
import { retryPipeline } from '../lib/pipelines.mjs';
import { list, over } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Retry, first attempt succeeds';
export const order = 3;

export function rows() {
  const out = [
    bareAsync(),
    {
      library: LIB.breakwater,
      variant: 'execute, maxAttempts 4 (3 retries)',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = retryPipeline();
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
  ];
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
  const retry = get(R, 'breakwater', 'execute, maxAttempts 4 (3 retries)');
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
      '.'
    );
  }
}
