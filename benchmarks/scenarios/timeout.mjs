/** A 1000 ms timeout around a call that succeeds at once, in both strategies. */
import { pipeline, timeout } from '../lib/breakwater.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Timeout 1000 ms, succeeds at once';
export const order = 4;

function timeoutRow(strategy) {
  return {
    library: 'breakwater',
    variant: `execute, ${strategy}`,
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const p = pipeline(timeout({ timeout: 1000, strategy }));
      return () => p.execute(asyncTarget);
    },
    check: isOne,
  };
}

export function rows() {
  return [bareAsync(), timeoutRow('cooperative'), timeoutRow('aggressive')];
}
