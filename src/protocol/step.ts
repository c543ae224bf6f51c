/**
 * The primitive protocol between the executor and the policies. Policies answer with numbers,
 * never by throwing, so a rejection costs a branch rather than an exception.
 */

/** Step kinds the executor switches on. */
export const StepKind = { Gate: 0, Retry: 1, Timeout: 2, Fallback: 3 } as const;
export type StepKind = (typeof StepKind)[keyof typeof StepKind];

/** Outcome codes handed to {@link Gate.release}. */
export const Outcome = {
  /** The call succeeded (or failed in a way the policy does not count). */
  Success: 0,
  /** The call failed in a way the policy counts. */
  Failure: 1,
  /** The call never reached the dependency or was cancelled by its caller: not counted. */
  Ignored: 2,
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** Returned by {@link Gate.admit} when the call is refused. */
export const REJECTED = -1;
/** Returned by {@link Gate.admit} when the call must wait for a permit (a bulkhead queue). */
export const WAIT = -2;

/** Marker for "the time was not read"; gates that need it read their own clock. */
export const NO_TIME = -1;

/**
 * A policy that admits or refuses calls: circuit breaker, bulkhead (and later rate limiter,
 * adaptive limit, load shedder).
 */
export interface Gate {
  readonly stepKind: typeof StepKind.Gate;
  /** True when `release` needs the call's duration (slow-call thresholds, latency). */
  readonly needsDuration: boolean;
  /** Time one call in this many for the gate's latency histogram (0: it keeps none). */
  readonly latencyEvery: number;
  /** True when `admit` can answer {@link WAIT}. */
  readonly mayWait: boolean;
  /**
   * Admits (a token >= 0), refuses ({@link REJECTED}) or asks to wait ({@link WAIT}).
   * `now` is the pipeline's clock reading, or {@link NO_TIME}.
   */
  admit(now: number): number;
  /**
   * Returns the permit taken by `admit` with how the call ended; `elapsed` is NaN when the
   * pipeline did not time the call; `detail` is the error or value, for events.
   */
  release(token: number, outcome: Outcome, elapsed: number, detail?: unknown): void;
  /**
   * `release(token, classifyResult(value), NaN, value)`: the permit of a call that succeeded
   * and was not timed, the common case, which a gate may handle in fewer steps.
   */
  releaseSuccess(token: number, value: unknown): void;
  /** How a failed call counts for this gate. */
  classifyError(error: unknown): Outcome;
  /** How a successful call's value counts for this gate. */
  classifyResult(value: unknown): Outcome;
  /** The error a refused call rejects with (preallocated unless the policy is in debug mode). */
  rejection(): Error;
}

/** @internal What a gate needs from an execution waiting in its line (a queue or a reserved turn). */
export interface WaitingExecution {
  /** True while the execution still waits at `step` under `stamp`. */
  queueLive(step: number, stamp: number): boolean;
  /** The execution waiting at `step` may go on. */
  queueAdmitted(step: number): void;
  /** The execution waiting at `step` is refused. */
  queueRejected(step: number, error: Error): void;
}

/** A gate whose `admit` may answer {@link WAIT}: a bulkhead with a queue, a rate limiter. */
export interface WaitingGate extends Gate {
  /** Puts `exec`, just told to wait at `step`, in line; returns its stamp. */
  enqueue(exec: WaitingExecution, step: number, now: number): number;
  /** An execution in line gave up (its signal aborted). */
  leave(): void;
}
