/**
 * What a chaos step costs while it is off: the closed breaker with a chaos step switched off
 * inside it against the breaker alone, and the composed pipeline with a latency step switched
 * off innermost against the same pipeline without it (a latency step may make calls wait, so
 * it needs a slot per call). A step enabled by a function that says no draws for every call
 * and asks the function for the drawn ones: its row shows what that costs. No peer has chaos.
 */
import { chaos, circuitBreaker, pipeline } from '../lib/breakwater.mjs';
import { LIB } from '../lib/peers.mjs';
import { breakerPipeline, composedPipeline } from '../lib/pipelines.mjs';
import { ns } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Chaos steps, switched off';
export const order = 5.7;

const BREAKER = 'breaker, execute, async target';
const BREAKER_OFF = 'breaker + chaos fault (off), execute, async target';
const BREAKER_ASKED =
  'breaker + chaos fault (enabled: () => false, rate 0.01), execute, async target';
const COMPOSED = 'composed, execute, async target';
const COMPOSED_OFF = 'composed + chaos latency (off), execute, async target';

const breaker = () =>
  circuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 });

/** The composed pipeline's policies, then `step` innermost. */
const composedWith = (step) => pipeline(...composedPipeline().policies, step);

function row(variant, versus, make) {
  return {
    library: LIB.breakwater,
    variant,
    kind: 'async',
    baseline: BARE_ASYNC,
    ...(versus === undefined ? {} : { versus }),
    prepare: () => {
      const p = make();
      return () => p.execute(asyncTarget);
    },
    check: isOne,
  };
}

export function rows() {
  // A build from before chaos steps has no row.
  if (chaos === undefined) return [];
  return [
    bareAsync(),
    row(BREAKER, undefined, breakerPipeline),
    row(BREAKER_OFF, BREAKER, () => pipeline(breaker(), chaos({ strategy: 'fault' }))),
    row(BREAKER_ASKED, BREAKER, () =>
      pipeline(breaker(), chaos({ strategy: 'fault', rate: 0.01, enabled: () => false })),
    ),
    row(COMPOSED, undefined, composedPipeline),
    row(COMPOSED_OFF, COMPOSED, () => composedWith(chaos({ strategy: 'latency', latency: 100 }))),
  ];
}

/** A chaos step left in a pipeline while off must cost next to nothing: 2 ns, no byte. */
export const budgets = [
  {
    id: 'chaos-off-breaker',
    rank: 50,
    kind: 'versus',
    label: 'chaos fault step switched off, inside a closed breaker, per call',
    metric: 'versusNs',
    limit: 2,
    rows: [{ scenario: 'chaos', variant: BREAKER_OFF }],
  },
  {
    id: 'chaos-off-composed',
    rank: 51,
    kind: 'versus',
    label: 'chaos latency step switched off, innermost in the composed pipeline, per call',
    metric: 'versusNs',
    limit: 2,
    rows: [{ scenario: 'chaos', variant: COMPOSED_OFF }],
  },
  {
    id: 'chaos-off-bytes',
    rank: 52,
    kind: 'versus',
    label: 'chaos steps switched off, bytes per call',
    metric: 'versusBytes',
    limit: 0,
    rows: [
      { scenario: 'chaos', variant: BREAKER_OFF },
      { scenario: 'chaos', variant: COMPOSED_OFF },
    ],
  },
];

/** This scenario's paragraph in “What the numbers say”; none when its rows are absent. */
export function reading({ get }) {
  const S = 'chaos';
  const off = get(S, 'breakwater', BREAKER_OFF);
  const alone = get(S, 'breakwater', BREAKER);
  if (off && alone) {
    return `A chaos step switched off adds ${ns(off.nsPerOp - alone.nsPerOp)} to a call through a closed breaker.`;
  }
}
