/**
 * The closed-breaker rows after the same breaker has run eleven different targets many times,
 * so the call sites it shares between targets have seen many shapes. Compare with
 * `breaker-closed`, measured in a clean process.
 */
import { breakerPeerRows } from '../lib/peer-rows.mjs';
import { LIB } from '../lib/peers.mjs';
import { breakerPipeline } from '../lib/pipelines.mjs';
import {
  BARE_ASYNC,
  BARE_AWAIT_SYNC,
  BARE_SYNC,
  bareAsync,
  bareAwaitSync,
  bareSync,
  isOne,
} from '../lib/rows.mjs';
import {
  asyncTarget,
  pollute,
  pollutionRounds,
  pollutionTargets,
  syncTarget,
} from '../lib/targets.mjs';

export const title = 'Circuit breaker, closed, polluted profile';
export const order = 7;

const CLEAN = 'breaker-closed';
const TARGETS = [
  { name: 'async target', target: asyncTarget, baseline: BARE_ASYNC },
  { name: 'sync target', target: syncTarget, baseline: BARE_AWAIT_SYNC },
];

export function rows({ quick }) {
  const rounds = pollutionRounds(quick);
  const out = [bareAsync(), bareAwaitSync(), bareSync()];
  for (const { name, target, baseline } of TARGETS) {
    out.push({
      library: LIB.breakwater,
      variant: `execute, ${name}`,
      kind: 'async',
      baseline,
      cleanOf: CLEAN,
      prepare: async () => {
        const p = breakerPipeline();
        await pollute((t) => p.execute(t), pollutionTargets(), rounds);
        return () => p.execute(target);
      },
      check: isOne,
    });
  }
  out.push({
    library: LIB.breakwater,
    variant: 'executeSync, sync target',
    kind: 'sync',
    baseline: BARE_SYNC,
    cleanOf: CLEAN,
    prepare: async () => {
      const p = breakerPipeline();
      await pollute((t) => p.executeSync(t), pollutionTargets(), rounds);
      return () => p.executeSync(syncTarget);
    },
    check: isOne,
  });
  out.push(...breakerPeerRows(TARGETS, { polluted: true, quick, cleanOf: CLEAN }));
  return out;
}
