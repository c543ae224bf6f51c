/** What the function run by a pipeline receives. */
export interface ExecutionContext {
  /**
   * Aborted when the call should stop: its timeout passed, or the caller's signal aborted.
   * Created on first read, so a function that never reads it pays nothing for it.
   */
  readonly signal: AbortSignal;
  /** The attempt number, 1 for the first (set by the innermost retry policy). */
  readonly attempt: number;
}

/** Options of one execution. */
export interface ExecuteOptions {
  /** Cancels the execution: waits stop at once, and the function's signal is aborted. */
  readonly signal?: AbortSignal;
}

let never: AbortSignal | undefined;

/** @internal A signal that never aborts, shared by executions that have no signal of their own. */
export function neverAbortedSignal(): AbortSignal {
  never ??= new AbortController().signal;
  return never;
}

/** @internal The context of a first attempt with only the caller's signal. */
export class CallerContext implements ExecutionContext {
  readonly attempt = 1;
  constructor(readonly signal: AbortSignal) {}
}

/** @internal The context shared by executions with no signal at all. */
export class SharedContext implements ExecutionContext {
  readonly attempt = 1;
  get signal(): AbortSignal {
    return neverAbortedSignal();
  }
}
