/**
 * A closed circuit breaker (5 consecutive failures, 10 s break) on the happy path, with an
 * async and a sync target, and as a method decorator on an async method next to the same
 * pipeline called with a closure per call. Peers: cockatiel 4 and 3 (`ConsecutiveBreaker(5)`),
 * opossum with `timeout: false` and with its defaults (a 10 s timer per call).
 */

import { breakerPeerRows } from '../lib/peer-rows.mjs';
import { LIB, opBreakerDefaults, shutdown } from '../lib/peers.mjs';
import {
  breakerPipeline,
  decoratedBreakerService,
  hasDecorators,
  plainService,
} from '../lib/pipelines.mjs';
import {
  BARE_ASYNC,
  BARE_AWAIT_SYNC,
  BARE_SYNC,
  bareAsync,
  bareAwaitSync,
  bareSync,
  DIRECT_CLOSURE,
  isOne,
  referenceThen,
} from '../lib/rows.mjs';
import { asyncTarget, syncTarget } from '../lib/targets.mjs';

export const title = 'Circuit breaker, closed';
export const order = 1;

const TARGETS = [
  { name: 'async target', target: asyncTarget, baseline: BARE_ASYNC },
  { name: 'sync target', target: syncTarget, baseline: BARE_AWAIT_SYNC },
];

export function rows() {
  const out = [bareAsync(), bareAwaitSync(), bareSync(), referenceThen()];
  for (const { name, target, baseline } of TARGETS) {
    out.push({
      library: LIB.breakwater,
      variant: `execute, ${name}`,
      kind: 'async',
      baseline,
      prepare: () => {
        const p = breakerPipeline();
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
    prepare: () => {
      const p = breakerPipeline();
      return () => p.executeSync(syncTarget);
    },
    check: isOne,
  });
  // What code without decorators writes: the reference the decorated row is judged against.
  out.push({
    library: LIB.breakwater,
    variant: DIRECT_CLOSURE,
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const p = breakerPipeline();
      const service = plainService();
      return () => p.execute(() => service.call());
    },
    check: isOne,
  });
  if (hasDecorators) {
    out.push({
      library: LIB.breakwater,
      variant: 'decorated async method (@circuitBreaker)',
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: DIRECT_CLOSURE,
      prepare: () => {
        const service = decoratedBreakerService();
        return () => service.call();
      },
      check: isOne,
    });
  }
  out.push(...breakerPeerRows(TARGETS, { polluted: false, quick: false, cleanOf: null }));
  out.push({
    library: LIB.opossum,
    variant: 'fire, async target (all defaults: a 10 s timer per call)',
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const b = opBreakerDefaults(asyncTarget);
      return { op: () => b.fire(), dispose: () => shutdown(b) };
    },
    check: isOne,
  });
  return out;
}
