/** What the function run by a pipeline receives. */
export interface ExecutionContext {
  /**
   * Aborted when the call should stop: its timeout passed, or the caller's signal aborted.
   * Created on first read, so a function that never reads it pays nothing for it. With no
   * timeout in the pipeline it is the caller's signal when one was given; with neither, a
   * signal that never aborts, made for this call alone, so listeners added to it go away with
   * the call (where a call keeps no per-call record, through a pipeline of gates that never
   * wait or through `executeSync`, each read makes a new one).
   */
  readonly signal: AbortSignal;
  /** The attempt number, 1 for the first (set by the innermost retry policy). */
  readonly attempt: number;
  /**
   * Which attempt of a hedge this is: 0 for the first, 1 for the first hedge, and so on (set
   * by the innermost hedge policy; 0 outside any hedge).
   */
  readonly hedge: number;
}

/** Options of one execution. */
export interface ExecuteOptions {
  /** Cancels the execution: waits stop at once, and the function's signal is aborted. */
  readonly signal?: AbortSignal;
}

/**
 * @internal What the function gets for one attempt through a pipeline's general path. It is
 * its own small object rather than the execution record, which is reused by later calls: a
 * function that keeps its context keeps this attempt's number and signal and nothing else.
 */
export class AttemptContext implements ExecutionContext {
  private controller: AbortController | undefined = undefined;
  private reason: unknown = undefined;

  constructor(
    readonly attempt: number,
    /** A timeout may abort the attempt, so it has a signal of its own. */
    private readonly own: boolean,
    private readonly callerSignal: AbortSignal | undefined,
  ) {}

  /** 0: only a hedge's later attempts are told apart (`HedgeAttemptContext`). */
  get hedge(): number {
    return 0;
  }

  get signal(): AbortSignal {
    if (!this.own && this.callerSignal !== undefined) return this.callerSignal;
    // Nothing may abort it without a timeout or a caller's signal, but listeners that user
    // code adds must die with the attempt, not pile up on one signal shared by every call.
    let c = this.controller;
    if (c === undefined) {
      c = new AbortController();
      this.controller = c;
      if (this.reason !== undefined) c.abort(this.reason);
    }
    return c.signal;
  }

  /** True once the function read its own signal (only meaningful when the context owns one). */
  get heard(): boolean {
    return this.controller !== undefined;
  }

  /** The attempt is cut short (deadline, caller's abort): its signal aborts, once. */
  abort(reason: unknown): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/**
 * @internal The context shared by the calls of a pipeline that keeps no per-call record (gates
 * that never wait). It cannot tell one call from another, so every read of `signal` makes a
 * new one that never aborts: listeners on it are garbage with the call that added them.
 */
export class SharedContext implements ExecutionContext {
  readonly attempt = 1;
  readonly hedge = 0;
  get signal(): AbortSignal {
    return new AbortController().signal;
  }
}
