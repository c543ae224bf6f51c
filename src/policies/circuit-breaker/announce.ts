import { rejectedChannel } from '../../telemetry/channels.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import { stateChangeChannel } from './diagnostics.js';
import type { StateChangeEvent, TransitionReason } from './events.js';
import { STATE_NAMES } from './state.js';

/**
 * @internal Counts a transition of breaker `b` (already made) and tells whoever listens:
 * listeners, a registry, a channel. The rates and counts describe the window that made it
 * open, when one did (NaN and 0 otherwise).
 */
export function announce(
  b: CircuitBreaker,
  from: number,
  to: number,
  reason: TransitionReason,
  now: number | undefined,
  failureRate: number,
  slowCallRate: number,
  callsInWindow: number,
  breakDuration: number,
): void {
  if (b.entered === undefined) b.entered = [0, 0, 0, 0, 0, 0];
  b.entered[to]!++;
  b.enteredAt = now ?? b.clock.now();
  const sink = b.transitionSink;
  if (b.stateChanged.size === 0 && sink === undefined && !stateChangeChannel.hasSubscribers) {
    return;
  }
  const event: StateChangeEvent = {
    from: STATE_NAMES[from]!,
    to: STATE_NAMES[to]!,
    reason,
    generation: b.gen,
    failureRate,
    slowCallRate,
    callsInWindow,
    breakDuration,
  };
  if (b.stateChanged.size !== 0) b.stateChanged.emit(event);
  if (sink !== undefined) sink(b, event);
  if (stateChangeChannel.hasSubscribers) stateChangeChannel.publish({ name: b.name, ...event });
}

/** @internal {@link announce} for a transition no window made. */
export function announceChange(
  b: CircuitBreaker,
  from: number,
  to: number,
  reason: TransitionReason,
  now?: number,
): void {
  announce(b, from, to, reason, now, Number.NaN, Number.NaN, 0, 0);
}

/**
 * @internal Tells the rejection listeners and channel of breaker `b` that it refused a call
 * in state `s`. Called only when one of them listens, so a refusal nobody watches costs a
 * branch.
 */
export function announceRejection(b: CircuitBreaker, s: number): void {
  const error = b.rejection();
  if (b.o.debug) b.pendingError = error;
  const state = STATE_NAMES[s]!;
  if (b.rejected.size !== 0) b.rejected.emit({ error, state });
  if (rejectedChannel.hasSubscribers) {
    rejectedChannel.publish({ kind: 'circuitBreaker', name: b.name, reason: state, error });
  }
}
