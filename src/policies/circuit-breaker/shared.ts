import { type CircuitBreaker, controllerOf } from './CircuitBreaker.js';
import type { ProbeGate } from './HalfOpenProbes.js';
import { S_HALF_OPEN } from './state.js';

// What shared signals (`breakwater/redis`) do to a local breaker. Functions, not methods, so
// that programs without shared signals do not carry them.

export type { ProbeGate } from './HalfOpenProbes.js';

/**
 * @internal Holds breaker `b` open until `until` (a time of its clock), as shared signals ask:
 * a closed or half-open breaker opens (reason `shared-open`), an open one keeps its break or a
 * longer one. Disabled, metrics-only and forced-open breakers are left alone. True when the
 * breaker opened.
 */
export function holdOpen(b: CircuitBreaker, until: number): boolean {
  return controllerOf(b).holdOpen(until);
}

/** @internal The probe gate of breaker `b`: asked before each half-open probe it has room for. */
export function probeGateOf(b: CircuitBreaker): ProbeGate | undefined {
  return controllerOf(b).gate;
}

/** @internal Gives breaker `b` probe gate `gate` (undefined: none). */
export function setProbeGate(b: CircuitBreaker, gate: ProbeGate | undefined): void {
  controllerOf(b).setProbeGate(gate);
}

/** @internal True while breaker `b` is half-open, without applying a transition due. */
export function isHalfOpen(b: CircuitBreaker): boolean {
  return controllerOf(b).code === S_HALF_OPEN;
}

/** @internal When the current (or last) break of breaker `b` ends, on its clock. */
export function breakEndOf(b: CircuitBreaker): number {
  return controllerOf(b).breakEnd;
}
