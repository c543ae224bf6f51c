/** Retry (3 attempts, default exponential backoff) whose first attempt succeeds. */
import { pipeline, retry } from '../lib/breakwater.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Retry, first attempt succeeds';
export const order = 3;

export function rows() {
  return [
    bareAsync(),
    {
      library: 'breakwater',
      variant: 'execute, maxAttempts 3',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = pipeline(retry({ maxAttempts: 3 }));
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
  ];
}
