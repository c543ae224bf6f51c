import type { LatencySnapshot } from '../../telemetry/LatencyHistogram.js';
import type { BreakerTally } from './BreakerTally.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import type { CircuitController } from './CircuitController.js';
import { type CircuitState, S_CLOSED, S_METRICS_ONLY, STATE_NAMES } from './state.js';

/** Counters of a breaker since it was made, for health endpoints and tests. */
export interface CircuitBreakerStats {
  readonly state: CircuitState;
  readonly generation: number;
  readonly successes: number;
  readonly failures: number;
  readonly rejections: number;
  readonly ignored: number;
  readonly callsInWindow: number;
  readonly failuresInWindow: number;
  readonly slowCallsInWindow: number;
  readonly probesInFlight: number;
  /** `rejections` by the state that refused them. */
  readonly rejectionsByReason: {
    readonly open: number;
    readonly halfOpen: number;
    readonly forcedOpen: number;
  };
  /** State changes since the breaker was built. */
  readonly transitions: number;
  /** State changes by the state entered. */
  readonly transitionsTo: Readonly<Record<CircuitState, number>>;
  /**
   * ms since the breaker entered its current state (since it was built when it never changed
   * state); absent for a keyed breaker kept as numbers while idle.
   */
  readonly timeInState?: number;
  /**
   * Latency of the calls it admitted since it was built, and of the last minute or so in
   * `recent`, with `metrics: { latency }` on (left out for keyed instances of a registry,
   * whose name keeps one histogram for all keys).
   */
  readonly latency?: LatencySnapshot;
}

/** Sums of breaker counters, which a breaker's counts are added to. */
export interface BreakerCounters {
  successes: number;
  failures: number;
  ignored: number;
  rejectedOpen: number;
  rejectedHalfOpen: number;
  rejectedForced: number;
  /** By state entered, in the order of `STATE_NAMES`. */
  readonly transitionsTo: number[];
}

/**
 * @internal What {@link CircuitBreaker.stats} answers for `breaker`, whose controller is `c`:
 * counters, plus what the window holds now.
 */
export function statsOf(breaker: CircuitBreaker, c: CircuitController): CircuitBreakerStats {
  const state = breaker.state;
  const now = c.options.clock.now();
  if (c.code === S_CLOSED || c.code === S_METRICS_ONLY) c.health.judge(now);
  const t = c;
  const entered = t.enteredBy;
  const transitionsTo = {} as Record<CircuitState, number>;
  let transitions = 0;
  STATE_NAMES.forEach((name, i) => {
    const n = entered === undefined ? 0 : entered[i]!;
    transitionsTo[name] = n;
    transitions += n;
  });
  const w = c.health;
  const stats: CircuitBreakerStats = {
    state,
    generation: c.generation,
    successes: t.successes,
    failures: t.failures,
    rejections: t.rejections,
    ignored: t.ignored,
    callsInWindow: w.calls,
    failuresInWindow: w.failures,
    slowCallsInWindow: w.slowCalls,
    probesInFlight: c.probesInFlight,
    rejectionsByReason: {
      open: t.rejectedOpen,
      halfOpen: t.rejectedHalfOpen,
      forcedOpen: t.rejectedForced,
    },
    transitions,
    transitionsTo,
    timeInState: Math.max(0, now - t.enteredAt),
  };
  return c.latency === undefined || c.latencyShared
    ? stats
    : { ...stats, latency: c.latency.snapshot(now) };
}

/** @internal Adds what `tally` counted to `sums`. */
export function addCountsOf(tally: BreakerTally, sums: BreakerCounters): void {
  sums.successes += tally.successes;
  sums.failures += tally.failures;
  sums.ignored += tally.ignored;
  sums.rejectedOpen += tally.rejectedOpen;
  sums.rejectedHalfOpen += tally.rejectedHalfOpen;
  sums.rejectedForced += tally.rejectedForced;
  const entered = tally.enteredBy;
  if (entered !== undefined) for (let i = 0; i < 6; i++) sums.transitionsTo[i]! += entered[i]!;
}
