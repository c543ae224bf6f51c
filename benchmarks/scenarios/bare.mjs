/** The floor: calling the target with no library at all. */

import { bytes, ns } from '../lib/prose.mjs';
import { bareAsync, bareSync } from '../lib/rows.mjs';

export const title = 'Bare call';
export const order = 0;

export function rows() {
  return [bareAsync(), bareSync()];
}

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const bare = get('bare', 'bare', 'await target()');
  const bareSync = get('bare', 'bare', 'target() sync');
  if (bare && bareSync) {
    return (
      `A bare \`await target()\` of an async function costs ${ns(bare.nsPerOp)} and ${bytes(bare.bytesPerOp)} per call ` +
      'on this machine (two promises: the target’s and the await). A plain sync call is about free once the JIT ' +
      `inlines it (${ns(bareSync.nsPerOp)}). Every “Δ” figure subtracts the bare row measured in the same process.`
    );
  }
}
