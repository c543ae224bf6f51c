/**
 * A 1000 ms timeout around a call that succeeds at once. breakwater and cockatiel 4 and 3 in
 * both strategies; opossum's `timeout: 1000` (its breaker included: it has no standalone
 * timeout). The reference rows price the platform calls a timeout may make per call.
 */
import { COCKATIELS, ckTimeout, LIB, opTimeout, shutdown } from '../lib/peers.mjs';
import { timeoutPipeline } from '../lib/pipelines.mjs';
import { BARE_ASYNC, BARE_SYNC, bareAsync, bareSync, isOne, REFERENCE } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Timeout 1000 ms, succeeds at once';
export const order = 4;

const STRATEGIES = ['cooperative', 'aggressive'];
const noop = () => {};

/** A sync reference row; `make` returns the op. */
function reference(variant, make) {
  return {
    library: REFERENCE,
    variant,
    kind: 'sync',
    baseline: BARE_SYNC,
    prepare: make,
    check: (o) => o.ok,
  };
}

export function rows() {
  const out = [
    bareAsync(),
    bareSync(),
    reference('performance.now()', () => () => performance.now()),
    reference('setTimeout(1000) + clearTimeout', () => () => clearTimeout(setTimeout(noop, 1000))),
    reference('timer.ref() + timer.unref(), no other timer', () => {
      const t = setTimeout(noop, 2_000_000_000);
      t.unref();
      return {
        op: () => {
          t.ref();
          t.unref();
        },
        dispose: () => clearTimeout(t),
      };
    }),
  ];
  for (const strategy of STRATEGIES) {
    out.push({
      library: LIB.breakwater,
      variant: `execute, ${strategy}`,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = timeoutPipeline(strategy);
        return { op: () => p.execute(asyncTarget), dispose: () => p.dispose() };
      },
      check: isOne,
    });
  }
  for (const { library, ck } of COCKATIELS) {
    for (const strategy of STRATEGIES) {
      out.push({
        library,
        variant: `execute, ${strategy}`,
        kind: 'async',
        baseline: BARE_ASYNC,
        prepare: () => {
          const p = ckTimeout(ck, strategy);
          return () => p.execute(asyncTarget);
        },
        check: isOne,
      });
    }
  }
  out.push({
    library: LIB.opossum,
    variant: 'fire, timeout 1000 (breaker included)',
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const b = opTimeout(asyncTarget);
      return { op: () => b.fire(), dispose: () => shutdown(b) };
    },
    check: isOne,
  });
  return out;
}
