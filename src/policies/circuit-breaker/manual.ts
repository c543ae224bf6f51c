import type { Disposer } from '../../events/Listeners.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import { S_CLOSED, S_DISABLED, S_FORCED_OPEN, S_METRICS_ONLY } from './state.js';

// The transitions a person asks for: each applies the time-driven ones due first.

/** @internal See {@link CircuitBreaker.isolate}. */
export function isolate(b: CircuitBreaker): Disposer {
  b.settleNow();
  b.isolations++;
  if (b.s !== S_FORCED_OPEN) b.moveTo(S_FORCED_OPEN, 'manual');
  // reset() ends every isolation at once; disposers handed out before it must not count
  // against isolations made after it.
  const epoch = b.isolationEpoch;
  let live = true;
  return () => {
    if (!live || epoch !== b.isolationEpoch) return;
    live = false;
    b.settleNow();
    if (--b.isolations === 0 && b.s === S_FORCED_OPEN) b.close('manual');
  };
}

/** @internal See {@link CircuitBreaker.forceOpen}. */
export function forceOpen(b: CircuitBreaker): void {
  b.settleNow();
  if (b.s !== S_FORCED_OPEN) b.moveTo(S_FORCED_OPEN, 'manual');
}

/** @internal See {@link CircuitBreaker.reset}. */
export function reset(b: CircuitBreaker): void {
  b.settleNow();
  b.isolations = 0;
  b.isolationEpoch++;
  if (b.s === S_CLOSED) b.enter(S_CLOSED);
  b.close('manual');
}

/** @internal See {@link CircuitBreaker.trip}. */
export function trip(b: CircuitBreaker): void {
  const now = b.clock.now();
  b.settleTime(now);
  b.open(now, 'manual', false);
}

/** @internal See {@link CircuitBreaker.disable}. */
export function disable(b: CircuitBreaker): void {
  b.settleNow();
  if (b.s !== S_DISABLED) b.moveTo(S_DISABLED, 'manual');
}

/** @internal See {@link CircuitBreaker.metricsOnly}. */
export function metricsOnly(b: CircuitBreaker): void {
  b.settleNow();
  if (b.s === S_METRICS_ONLY) return;
  b.window.reset();
  b.moveTo(S_METRICS_ONLY, 'manual');
}
