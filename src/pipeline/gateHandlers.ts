import type { Gate } from '../protocol/step.js';
import { releaseFailed, releaseOk } from './release.js';
import { type ExecutionResult, type Failure, failure, success } from './result.js';

/** @internal Handlers for the promise of an async call through a gates-only pipeline, per token set. */
export interface GateHandlers {
  readonly tokens: number[];
  /** The first token: the only one of a pipeline of one gate. */
  readonly token: number;
  readonly ok: (value: unknown) => unknown;
  readonly err: (error: unknown) => never;
  readonly tryOk: (value: unknown) => ExecutionResult<unknown>;
  readonly tryErr: (error: unknown) => Failure;
}

/** @internal The handlers that release `gates` (each admitted with its token of `tokens`). */
export function gateHandlers(gates: readonly Gate[], tokens: number[]): GateHandlers {
  if (gates.length === 1) return oneGateHandlers(gates[0]!, tokens);
  const onOk = (value: unknown): void => {
    for (let i = gates.length - 1; i >= 0; i--) releaseOk(gates[i]!, tokens[i]!, value, Number.NaN);
  };
  const onErr = (error: unknown): void => {
    for (let i = gates.length - 1; i >= 0; i--) {
      releaseFailed(gates[i]!, tokens[i]!, error, Number.NaN);
    }
  };
  return {
    tokens,
    token: tokens[0]!,
    ok: (value) => {
      onOk(value);
      return value;
    },
    err: (error) => {
      onErr(error);
      throw error;
    },
    tryOk: (value) => {
      onOk(value);
      return success(value);
    },
    tryErr: (error) => {
      onErr(error);
      return failure(error);
    },
  };
}

/** @internal The handlers of a pipeline of one gate: the common case, without the loops. */
export function oneGateHandlers(gate: Gate, tokens: number[]): GateHandlers {
  const token = tokens[0]!;
  return {
    tokens,
    token,
    ok: (value) => {
      releaseOk(gate, token, value, Number.NaN);
      return value;
    },
    err: (error) => {
      releaseFailed(gate, token, error, Number.NaN);
      throw error;
    },
    tryOk: (value) => {
      releaseOk(gate, token, value, Number.NaN);
      return success(value);
    },
    tryErr: (error) => {
      releaseFailed(gate, token, error, Number.NaN);
      return failure(error);
    },
  };
}

/** @internal Whether token sets `a` and `b` (of the same length) hold the same tokens. */
export function sameTokens(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
