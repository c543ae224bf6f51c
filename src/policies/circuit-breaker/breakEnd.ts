import { Wakeups } from '../../clock/Wakeups.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import { S_OPEN } from './state.js';

// How an open breaker learns that its break may be over without reading the clock on every
// refusal: one wake-up per break from the clock's shared heap (see Wakeups).

/** @internal Arranges for open breaker `b` to hear when its break ends, as seen at `now`. */
export function awaitBreakEnd(b: CircuitBreaker, now: number): void {
  if (b.clock.cheapNow === true) {
    b.breakMayBeOver = true;
    return;
  }
  b.breakMayBeOver = false;
  // One pending wake per breaker: a later one would only find the breaker still open.
  if (b.openUntil >= b.wakeAt) return;
  b.wakeAt = b.openUntil;
  b.weakSelf ??= new WeakRef(b);
  Wakeups.of(b.clock).schedule(b.openUntil, now, b.weakSelf);
}

/** @internal See {@link CircuitBreaker.wake}. */
export function wakeAtBreakEnd(b: CircuitBreaker): void {
  b.wakeAt = Number.POSITIVE_INFINITY;
  if (b.s !== S_OPEN) return;
  const now = b.clock.now();
  // Woken for an earlier break (closed and re-opened since), or a timer that ran early.
  if (now < b.openUntil) awaitBreakEnd(b, now);
  else b.breakMayBeOver = true;
}
