/**
 * The composed rows after the same pipeline has run eleven different targets many times.
 * Compare with `composed`, measured in a clean process.
 */
import { composedPeerRows } from '../lib/peer-rows.mjs';
import { LIB } from '../lib/peers.mjs';
import { composedPipeline } from '../lib/pipelines.mjs';
import { BARE_ASYNC, BARE_AWAIT_SYNC, bareAsync, bareAwaitSync, isOne } from '../lib/rows.mjs';
import {
  asyncTarget,
  pollute,
  pollutionRounds,
  pollutionTargets,
  syncTarget,
} from '../lib/targets.mjs';

export const title = 'Composed, polluted profile';
export const order = 8;

const CLEAN = 'composed';

function pollutedRow(variant, baseline, target, quick) {
  return {
    library: LIB.breakwater,
    variant,
    kind: 'async',
    baseline,
    cleanOf: CLEAN,
    prepare: async () => {
      const p = composedPipeline();
      await pollute((t) => p.execute(t), pollutionTargets(), pollutionRounds(quick));
      return { op: () => p.execute(target), dispose: () => p.dispose() };
    },
    check: isOne,
  };
}

export function rows({ quick }) {
  return [
    bareAsync(),
    bareAwaitSync(),
    pollutedRow('execute, async target', BARE_ASYNC, asyncTarget, quick),
    pollutedRow('execute, sync target', BARE_AWAIT_SYNC, syncTarget, quick),
    ...composedPeerRows(BARE_ASYNC, asyncTarget, { polluted: true, quick, cleanOf: CLEAN }),
  ];
}
