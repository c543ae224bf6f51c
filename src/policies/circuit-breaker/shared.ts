import { announce } from './announce.js';
import { awaitBreakEnd } from './breakEnd.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import { S_CLOSED, S_HALF_OPEN, S_OPEN } from './state.js';

/**
 * @internal Holds breaker `b` open until `until` (a time of its clock), as shared signals ask:
 * a closed or half-open breaker opens (reason `shared-open`), an open one keeps its break or a
 * longer one. Disabled, metrics-only and forced-open breakers are left alone. True when the
 * breaker opened. A function, not a method, so that programs without shared signals do not
 * carry it.
 */
export function holdOpen(b: CircuitBreaker, until: number): boolean {
  const now = b.clock.now();
  b.settleTime(now);
  const from = b.s;
  if (!(until > now)) return false;
  if (from === S_OPEN) {
    // A longer break only: shared state never shortens what the local breaker decided.
    if (until > b.openUntil) {
      b.openUntil = until;
      if (b.openError !== undefined) b.openError.openUntil = until;
      awaitBreakEnd(b, now);
    }
    return false;
  }
  if (from !== S_CLOSED && from !== S_HALF_OPEN) return false;
  // Not a break of its own: the backoff of later breaks is left as it is.
  b.probesInFlight = 0;
  b.openUntil = until;
  if (b.openError !== undefined) b.openError.openUntil = until;
  b.enter(S_OPEN);
  awaitBreakEnd(b, now);
  announce(b, from, S_OPEN, 'shared-open', now, Number.NaN, Number.NaN, 0, until - now);
  b.window.reset();
  return true;
}
