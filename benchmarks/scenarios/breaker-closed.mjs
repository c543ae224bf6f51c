/** A closed circuit breaker (consecutive window of 5) on the happy path. */
import { breakerPipeline } from '../lib/pipelines.mjs';
import { BARE_ASYNC, BARE_SYNC, bareAsync, bareSync, isOne } from '../lib/rows.mjs';
import { asyncTarget, syncTarget } from '../lib/targets.mjs';

export const title = 'Circuit breaker, closed';
export const order = 1;

export function rows() {
  return [
    bareAsync(),
    bareSync(),
    {
      library: 'breakwater',
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = breakerPipeline();
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
    {
      library: 'breakwater',
      variant: 'executeSync, sync target',
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () => {
        const p = breakerPipeline();
        return () => p.executeSync(syncTarget);
      },
      check: isOne,
    },
  ];
}
