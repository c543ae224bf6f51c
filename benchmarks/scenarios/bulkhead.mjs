/**
 * A bulkhead of 100 concurrent calls without a queue, never full here. Peers: cockatiel 4 and
 * 3 (`bulkhead(100)`), opossum's `capacity: 100` (its breaker included).
 */
import { COCKATIELS, ckBulkhead, LIB, opBulkhead, shutdown } from '../lib/peers.mjs';
import { bulkheadPipeline } from '../lib/pipelines.mjs';
import { list, over } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Bulkhead 100, no queue';
export const order = 5;

export function rows() {
  const out = [
    bareAsync(),
    {
      library: LIB.breakwater,
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = bulkheadPipeline();
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
  ];
  for (const { library, ck } of COCKATIELS) {
    out.push({
      library,
      variant: 'execute, async target',
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = ckBulkhead(ck);
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    });
  }
  out.push({
    library: LIB.opossum,
    variant: 'fire, capacity 100 (breaker included)',
    kind: 'async',
    baseline: BARE_ASYNC,
    prepare: () => {
      const b = opBulkhead(asyncTarget);
      return { op: () => b.fire(), dispose: () => shutdown(b) };
    },
    check: isOne,
  });
  return out;
}

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const B = 'bulkhead';
  const bh = get(B, 'breakwater', 'execute, async target');
  if (bh) {
    return (
      `A bulkhead of 100: breakwater ${over(bh)}; ` +
      list(
        [
          ['cockatiel 4', get(B, 'cockatiel 4', 'execute, async target')],
          ['cockatiel 3', get(B, 'cockatiel 3', 'execute, async target')],
          [
            'opossum (breaker included)',
            get(B, 'opossum', 'fire, capacity 100 (breaker included)'),
          ],
        ],
        over,
      ) +
      '.'
    );
  }
}
