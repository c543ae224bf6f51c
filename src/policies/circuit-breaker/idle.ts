import type { CircuitBreaker } from './CircuitBreaker.js';
import { S_CLOSED, S_HALF_OPEN, S_OPEN } from './state.js';

/**
 * @internal For registries that keep idle breakers as a few numbers: when the breaker is
 * closed, nobody listens to it and its window holds nothing but successes (so a breaker
 * rebuilt from the numbers behaves the same), writes [calls in window, generation,
 * successes, failures, rejections, ignored] at `out[at..at+5]` and returns true.
 */
export function writeIdle(b: CircuitBreaker, out: Float64Array, at: number): boolean {
  if (
    b.s !== S_CLOSED ||
    b.backoffLevel(b.clock.now()) !== 0 ||
    b.stateChanged.size !== 0 ||
    b.succeeded.size !== 0 ||
    b.failed.size !== 0 ||
    b.rejected.size !== 0
  ) {
    return false;
  }
  const w = b.window;
  if (b.needsNow) {
    // Time-window outcomes need their times: only an empty one is exported.
    w.judge(b.clock.now());
    if (w.calls !== 0) return false;
  } else if (w.failures !== 0 || w.slowCalls !== 0) {
    return false;
  }
  out[at] = w.calls;
  out[at + 1] = b.gen;
  out[at + 2] = b.nSuccesses;
  out[at + 3] = b.nFailures;
  out[at + 4] = b.nRejections;
  out[at + 5] = b.nIgnored;
  return true;
}

/** @internal Restores what {@link writeIdle} wrote, into a breaker just built. */
export function readIdle(b: CircuitBreaker, from: Float64Array, at: number): void {
  b.window.restoreCalls(from[at]!);
  b.gen = from[at + 1]!;
  b.refreshQuiet();
  b.nSuccesses = from[at + 2]!;
  b.nFailures = from[at + 3]!;
  b.nRejections = from[at + 4]!;
  b.nIgnored = from[at + 5]!;
}

/**
 * @internal How long (ms) breaker `b` has been half-open without a call, at `now`: since its
 * break ended when nobody called it since; 0 in every other case.
 */
export function halfOpenIdleFor(b: CircuitBreaker, now: number): number {
  if (b.s === S_OPEN || b.s === S_HALF_OPEN) b.settleTime(now);
  return b.s === S_HALF_OPEN && b.halfOpenDeadline === Number.POSITIVE_INFINITY
    ? now - b.openUntil
    : 0;
}
