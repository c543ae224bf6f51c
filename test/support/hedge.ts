import {
  circuitBreaker,
  type ExecutionContext,
  type HedgeEvent,
  type hedge,
  type Policy,
  pipeline,
} from '../../src/index.js';
import type { ManualClock } from '../../src/testing/index.js';
import { deferred } from './async.js';

/**
 * A function whose attempts the test answers by hand: `answer[n]` settles attempt `n`, and
 * `signals[n]` is the signal attempt `n` was given.
 */
export function byHand<T = string>() {
  const answers: ReturnType<typeof deferred<T>>[] = [];
  const signals: AbortSignal[] = [];
  const starts: number[] = [];
  return {
    answers,
    signals,
    starts,
    fn(clock: ManualClock) {
      return ({ hedge: n, signal }: ExecutionContext): Promise<T> => {
        const d = deferred<T>();
        answers[n] = d;
        signals[n] = signal;
        starts[n] = clock.now();
        return d.promise;
      };
    },
  };
}

export function recordHedges(h: ReturnType<typeof hedge>) {
  const events: (HedgeEvent & { at: number })[] = [];
  return {
    events,
    listen: (clock: ManualClock) => h.onHedge((e) => events.push({ ...e, at: clock.now() })),
  };
}

/** The two ways a hedge runs its attempts: direct calls, or executions of the steps inside it. */
export const HEDGE_MODES = ['alone', 'with a step inside it'] as const;

/**
 * `policies` as a pipeline; `'with a step inside it'` adds a breaker that never opens after
 * them, so the hedge's attempts run as executions of the inner pipeline.
 */
export const hedged = (mode: (typeof HEDGE_MODES)[number], ...policies: Policy[]) =>
  mode === 'alone'
    ? pipeline(...policies)
    : pipeline(...policies, circuitBreaker({ window: { kind: 'consecutive', threshold: 1_000 } }));
