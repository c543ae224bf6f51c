import type { LatencySnapshot } from '../../telemetry/LatencyHistogram.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
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

/** Sums of breaker counters that {@link CircuitBreaker.addCounts} adds to. */
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

/** @internal What {@link CircuitBreaker.stats} answers: counters, plus what the window holds now. */
export function statsOf(b: CircuitBreaker): CircuitBreakerStats {
  const state = b.state;
  const now = b.clock.now();
  if (b.s === S_CLOSED || b.s === S_METRICS_ONLY) b.window.judge(now);
  const entered = b.entered;
  const transitionsTo = {} as Record<CircuitState, number>;
  let transitions = 0;
  STATE_NAMES.forEach((name, i) => {
    const n = entered === undefined ? 0 : entered[i]!;
    transitionsTo[name] = n;
    transitions += n;
  });
  const stats: CircuitBreakerStats = {
    state,
    generation: b.gen,
    successes: b.nSuccesses,
    failures: b.nFailures,
    rejections: b.nRejections,
    ignored: b.nIgnored,
    callsInWindow: b.window.calls,
    failuresInWindow: b.window.failures,
    slowCallsInWindow: b.window.slowCalls,
    probesInFlight: b.probesInFlight,
    rejectionsByReason: {
      open: b.nRejections - b.nRejectedHalfOpen - b.nRejectedForced,
      halfOpen: b.nRejectedHalfOpen,
      forcedOpen: b.nRejectedForced,
    },
    transitions,
    transitionsTo,
    timeInState: Math.max(0, now - b.enteredAt),
  };
  return b.latency === undefined || b.latencyShared
    ? stats
    : { ...stats, latency: b.latency.snapshot(now) };
}

/** @internal Adds the counters of breaker `b` to `sums` (see {@link CircuitBreaker.addCounts}). */
export function addCountsOf(b: CircuitBreaker, sums: BreakerCounters): void {
  sums.successes += b.nSuccesses;
  sums.failures += b.nFailures;
  sums.ignored += b.nIgnored;
  sums.rejectedOpen += b.nRejections - b.nRejectedHalfOpen - b.nRejectedForced;
  sums.rejectedHalfOpen += b.nRejectedHalfOpen;
  sums.rejectedForced += b.nRejectedForced;
  const entered = b.entered;
  if (entered !== undefined) for (let i = 0; i < 6; i++) sums.transitionsTo[i]! += entered[i]!;
}
