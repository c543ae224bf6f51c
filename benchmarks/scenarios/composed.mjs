/** retry + breaker + timeout(1000, cooperative) + bulkhead(100) in one pipeline. */
import { composedPipeline } from '../lib/pipelines.mjs';
import { BARE_ASYNC, BARE_AWAIT_SYNC, bareAsync, bareAwaitSync, isOne } from '../lib/rows.mjs';
import { asyncTarget, syncTarget } from '../lib/targets.mjs';

export const title = 'Composed: retry + breaker + timeout + bulkhead';
export const order = 6;

export function rows() {
  return [
    bareAsync(),
    bareAwaitSync(),
    {
      library: 'breakwater',
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = composedPipeline();
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
    {
      library: 'breakwater',
      variant: 'execute, sync target',
      kind: 'async',
      baseline: BARE_AWAIT_SYNC,
      prepare: () => {
        const p = composedPipeline();
        return () => p.execute(syncTarget);
      },
      check: isOne,
    },
  ];
}
