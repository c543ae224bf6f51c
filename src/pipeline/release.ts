import { type Gate, Outcome } from '../protocol/step.js';

/**
 * @internal How every path of a pipeline gives a gate its permit back. A call that ended with
 * `value`: untimed (`elapsed` NaN), through the gate's shorter `releaseSuccess`.
 */
export function releaseOk(gate: Gate, token: number, value: unknown, elapsed: number): void {
  if (Number.isNaN(elapsed)) gate.releaseSuccess(token, value);
  else gate.release(token, gate.classifyResult(value), elapsed, value);
}

/**
 * @internal A call that failed with `error`, an inner gate's refusal included: the gate says how
 * it counts (a library gate ignores a refusal that did not reach the dependency, and may count
 * one that did, as `PolicyRejectedError` marks it).
 */
export function releaseFailed(gate: Gate, token: number, error: unknown, elapsed: number): void {
  gate.release(token, gate.classifyError(error), elapsed, error);
}

/** @internal A call its caller cancelled: says nothing of the dependency. */
export function releaseCancelled(
  gate: Gate,
  token: number,
  reason: unknown,
  elapsed: number,
): void {
  gate.release(token, Outcome.Ignored, elapsed, reason);
}

/**
 * @internal Gate `refused` of `gates` refused the call with `refusal`: the gates outside it,
 * admitted with `tokens`, get their permits back, innermost first, as after any failure.
 */
export function releaseRefused(
  gates: readonly Gate[],
  tokens: readonly number[],
  refused: number,
  refusal: Error,
): void {
  for (let j = refused - 1; j >= 0; j--) releaseFailed(gates[j]!, tokens[j]!, refusal, Number.NaN);
}
