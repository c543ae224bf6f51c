/**
 * retry + breaker + timeout (1000 ms, cooperative) + bulkhead (100) in one breakwater
 * pipeline, and as breakwater method decorators on an async method (when the build has
 * them); cockatiel 4 and 3 `wrap(retry, breaker, bulkhead, timeout)`; opossum (timeout 1000,
 * capacity 100) driven by p-retry (3 retries).
 */
import { composedPeerRows } from '../lib/peer-rows.mjs';
import { LIB } from '../lib/peers.mjs';
import {
  composedPipeline,
  decoratedService,
  hasDecorators,
  plainService,
} from '../lib/pipelines.mjs';
import {
  BARE_ASYNC,
  BARE_AWAIT_SYNC,
  bareAsync,
  bareAwaitSync,
  DIRECT_CLOSURE,
  isOne,
} from '../lib/rows.mjs';
import { asyncTarget, syncTarget } from '../lib/targets.mjs';

export const title = 'Composed: retry + breaker + timeout + bulkhead';
export const order = 6;

export function rows({ quick }) {
  return [
    bareAsync(),
    bareAwaitSync(),
    {
      library: LIB.breakwater,
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = composedPipeline();
        return { op: () => p.execute(asyncTarget), dispose: () => p.dispose() };
      },
      check: isOne,
    },
    {
      library: LIB.breakwater,
      variant: 'execute, sync target',
      kind: 'async',
      baseline: BARE_AWAIT_SYNC,
      prepare: () => {
        const p = composedPipeline();
        return { op: () => p.execute(syncTarget), dispose: () => p.dispose() };
      },
      check: isOne,
    },
    // What code without decorators writes: the reference the decorated row is judged against.
    {
      library: LIB.breakwater,
      variant: DIRECT_CLOSURE,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = composedPipeline();
        const service = plainService();
        return { op: () => p.execute(() => service.call()), dispose: () => p.dispose() };
      },
      check: isOne,
    },
    ...(hasDecorators
      ? [
          {
            library: LIB.breakwater,
            variant: 'decorated async method (@retry @circuitBreaker @timeout @bulkhead)',
            kind: 'async',
            baseline: BARE_ASYNC,
            versus: DIRECT_CLOSURE,
            prepare: () => {
              const service = decoratedService();
              return () => service.call();
            },
            check: isOne,
          },
        ]
      : []),
    ...composedPeerRows(BARE_ASYNC, asyncTarget, { polluted: false, quick, cleanOf: null }),
  ];
}
