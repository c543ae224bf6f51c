import type { CircuitBreaker } from './CircuitBreaker.js';
import { controllerOf } from './CircuitBreaker.js';
import { S_CLOSED, S_HALF_OPEN, S_OPEN } from './state.js';

/**
 * @internal For registries that keep idle breakers as a few numbers: when the breaker is
 * closed, nobody listens to it and its window holds nothing but successes (so a breaker
 * rebuilt from the numbers behaves the same), writes [calls in window, generation,
 * successes, failures, rejections, ignored] at `out[at..at+5]` and returns true.
 */
export function writeIdle(b: CircuitBreaker, out: Float64Array, at: number): boolean {
  const c = controllerOf(b);
  const now = c.options.clock.now();
  if (c.code !== S_CLOSED || c.backoffLevel(now) !== 0 || c.events.listened) return false;
  const w = c.health;
  if (c.timed) {
    // Time-window outcomes need their times: only an empty one is exported.
    w.judge(now);
    if (w.calls !== 0) return false;
  } else if (w.failures !== 0 || w.slowCalls !== 0) {
    return false;
  }
  const t = c;
  out[at] = w.calls;
  out[at + 1] = c.generation;
  out[at + 2] = t.successes;
  out[at + 3] = t.failures;
  out[at + 4] = t.rejections;
  out[at + 5] = t.ignored;
  return true;
}

/** @internal Restores what {@link writeIdle} wrote, into a breaker just built. */
export function readIdle(b: CircuitBreaker, from: Float64Array, at: number): void {
  const c = controllerOf(b);
  c.health.restoreCalls(from[at]!);
  c.restoreGeneration(from[at + 1]!);
  const t = c;
  t.successes = from[at + 2]!;
  t.failures = from[at + 3]!;
  t.rejections = from[at + 4]!;
  t.ignored = from[at + 5]!;
}

/**
 * @internal How long (ms) breaker `b` has been half-open without a call, at `now`: since its
 * break ended when nobody called it since; 0 in every other case.
 */
export function halfOpenIdleFor(b: CircuitBreaker, now: number): number {
  const c = controllerOf(b);
  if (c.code === S_OPEN || c.code === S_HALF_OPEN) c.settleTime(now);
  return c.code === S_HALF_OPEN && c.halfOpenDeadline === Number.POSITIVE_INFINITY
    ? now - c.breakEnd
    : 0;
}
