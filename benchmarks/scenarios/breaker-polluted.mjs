/**
 * The closed-breaker rows after the same pipeline has run eleven different targets many times,
 * so the call sites it shares between targets have seen many shapes. Compare with
 * `breaker-closed`, measured in a clean process.
 */
import { breakerPipeline } from '../lib/pipelines.mjs';
import { BARE_ASYNC, BARE_SYNC, bareAsync, bareSync, isOne } from '../lib/rows.mjs';
import {
  asyncTarget,
  pollute,
  pollutionRounds,
  pollutionTargets,
  syncTarget,
} from '../lib/targets.mjs';

export const title = 'Circuit breaker, closed, polluted profile';
export const order = 7;

export function rows({ quick }) {
  const rounds = pollutionRounds(quick);
  return [
    bareAsync(),
    bareSync(),
    {
      library: 'breakwater',
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      cleanOf: 'breaker-closed',
      prepare: async () => {
        const p = breakerPipeline();
        await pollute((t) => p.execute(t), pollutionTargets(), rounds);
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
    {
      library: 'breakwater',
      variant: 'executeSync, sync target',
      kind: 'sync',
      baseline: BARE_SYNC,
      cleanOf: 'breaker-closed',
      prepare: async () => {
        const p = breakerPipeline();
        await pollute((t) => p.executeSync(t), pollutionTargets(), rounds);
        return () => p.executeSync(syncTarget);
      },
      check: isOne,
    },
  ];
}
