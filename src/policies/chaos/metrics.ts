import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import type { Chaos } from './Chaos.js';
import { CHAOS_STRATEGIES } from './options.js';

/** Counts of one chaos series (arrays indexed by strategy, in the order of `CHAOS_STRATEGIES`). */
export interface ChaosCounts {
  calls: number;
  injections: number[];
  /** Steps of each strategy summed here: their injection series show even at 0. */
  steps: number[];
  capped: number;
  realFailures: number;
  active: number;
}

const declared = declareMetrics<Chaos, ChaosCounts, keyof Omit<ChaosCounts, 'steps'>>({
  prefix: 'chaos',
  readings: {
    calls: counter('{call}', 'Calls that reached a chaos step while it was on.'),
    injections: counter('{call}', 'Calls a chaos step injected into, by strategy.', {
      label: 'strategy',
      values: CHAOS_STRATEGIES,
      array: 'injections',
      shows: (c, strategy) => c.steps[CHAOS_STRATEGIES.indexOf(strategy as never)]! > 0,
    }),
    capped: counter(
      '{call}',
      'Calls a chaos step drew for injection but let through: its maxActive injections were active.',
    ),
    realFailures: counter(
      '{call}',
      'Calls a chaos step let through that failed: real failures, never an injection.',
    ),
    active: gauge('{call}', 'Injections of a chaos step active now (latencies, behaviours).'),
  },
  counts: () => ({
    calls: 0,
    injections: CHAOS_STRATEGIES.map(() => 0),
    steps: CHAOS_STRATEGIES.map(() => 0),
    capped: 0,
    realFailures: 0,
    active: 0,
  }),
  enabled: (s) => s.metrics.enabled,
  read(c, s) {
    const stats = s.stats();
    const i = CHAOS_STRATEGIES.indexOf(stats.strategy);
    c.calls += stats.calls;
    c.injections[i]! += stats.injected;
    c.steps[i]! += 1;
    c.capped += stats.capped;
    c.realFailures += stats.realFailures;
    c.active += stats.active;
  },
  isEmpty: (c) =>
    c.calls === 0 && c.capped === 0 && c.realFailures === 0 && c.injections.every((n) => n === 0),
});

/** The metric families of chaos steps. */
export const chaosFamilies = declared.families;
/** @internal How chaos steps report into their families. */
export const chaosMetrics = declared.metrics;
