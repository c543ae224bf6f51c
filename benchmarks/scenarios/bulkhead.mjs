/** A bulkhead of 100 concurrent calls without a queue, never full here. */
import { bulkhead, pipeline } from '../lib/breakwater.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Bulkhead 100, no queue';
export const order = 5;

export function rows() {
  return [
    bareAsync(),
    {
      library: 'breakwater',
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = pipeline(bulkhead(100));
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
  ];
}
