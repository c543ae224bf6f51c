import type { CircuitBreaker } from './CircuitBreaker.js';
import { S_CLOSED } from './state.js';

/** @internal See {@link CircuitBreaker.exportIdle}. */
export function writeIdle(b: CircuitBreaker, out: Float64Array, at: number): boolean {
  if (
    b.s !== S_CLOSED ||
    b.consecutiveOpens !== 0 ||
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

/** @internal See {@link CircuitBreaker.importIdle}. */
export function readIdle(b: CircuitBreaker, from: Float64Array, at: number): void {
  b.window.restoreCalls(from[at]!);
  b.gen = from[at + 1]!;
  b.refreshQuiet();
  b.nSuccesses = from[at + 2]!;
  b.nFailures = from[at + 3]!;
  b.nRejections = from[at + 4]!;
  b.nIgnored = from[at + 5]!;
}
