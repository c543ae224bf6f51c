import { announceChange } from './announce.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import { S_HALF_OPEN, S_OPEN } from './state.js';

/**
 * @internal What a breaker asks, when half-open, before admitting a probe it has room for:
 * false refuses the call. Shared signals lease probes cluster-wide through it.
 */
export interface ProbeGate {
  mayProbe(now: number): boolean;
}

// The half-open bookkeeping of a breaker: a handful of calls per break, off the closed path.

/** @internal Moves open breaker `b`, whose break is over at `now`, to half-open. */
export function enterHalfOpen(b: CircuitBreaker, now: number): void {
  b.enter(S_HALF_OPEN);
  b.probesStarted = 0;
  b.probesInFlight = 0;
  b.probeSuccesses = 0;
  b.probeFailures = 0;
  b.halfOpenDeadline = Number.POSITIVE_INFINITY;
  announceChange(b, S_OPEN, S_HALF_OPEN, 'break-elapsed', now);
}

/** @internal Counts the end of a probe of half-open breaker `b`, then judges the probes. */
export function releaseProbe(b: CircuitBreaker, failed: boolean): void {
  b.probesInFlight--;
  if (failed) b.probeFailures++;
  else b.probeSuccesses++;
  judgeProbes(b);
}

/** @internal Closes or re-opens half-open breaker `b` once its probes have decided. */
export function judgeProbes(b: CircuitBreaker): void {
  const o = b.o;
  // The epsilon keeps 0.8 × 5 from rounding up to 5; at least one success is always needed.
  const needed = Math.max(1, Math.ceil(o.probes * o.successRatio - 1e-9));
  if (b.probeSuccesses >= needed) {
    b.close('probes-succeeded');
  } else if (b.probeFailures > o.probes - needed) {
    b.open(b.clock.now(), 'probes-failed', false);
  }
}
