/**
 * The primitive protocol between the executor and the policies. Policies answer with numbers,
 * never by throwing, so a rejection costs a branch rather than an exception.
 */

/** Step kinds the executor switches on. */
export const StepKind = {
  Gate: 0,
  Retry: 1,
  Timeout: 2,
  Fallback: 3,
  Hedge: 4,
  Coalesce: 5,
} as const;
export type StepKind = (typeof StepKind)[keyof typeof StepKind];

/** Outcome codes handed to `Gate.release`. */
export const Outcome = {
  /** The call succeeded (or failed in a way the policy does not count). */
  Success: 0,
  /** The call failed in a way the policy counts. */
  Failure: 1,
  /** The call never reached the dependency or was cancelled by its caller: not counted. */
  Ignored: 2,
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** Returned by `Gate.admit` when the call is refused. */
export const REJECTED = -1;
/** Returned by `Gate.admit` when the call must wait for a permit (see {@link WaitingGate}). */
export const WAIT = -2;
/**
 * Returned by `Gate.admit` when the gate answers the call itself (a cache hit, an injected
 * outcome, a stub): the call never reaches the steps inside the gate nor its function, and
 * ends with the value the executor then reads from {@link AnsweringGate.answer}. Only a gate
 * whose `needs().mayAnswer` is true may answer it.
 *
 * @example
 * ```ts
 * admit(): number {
 *   if (this.hasFreshValue()) return ANSWERED; // the executor then asks answer()
 *   return 0;
 * }
 * ```
 */
export const ANSWERED = -3;

/** Marker for "the time was not read"; gates that need it read their own clock. */
export const NO_TIME = -1;

/**
 * What a step needs of the executor, asked once when a pipeline is built (never per call), so
 * the executor sets itself up from these answers rather than from the step's class.
 */
export interface StepNeeds {
  /** Calls are timed from their start (a deadline, a queue timeout, a slow-call threshold). */
  readonly startTime: boolean;
  /** Calls' end is timed too (their duration). */
  readonly endTime: boolean;
  /** A call may wait at this step (a queue, a reserved turn, a retry delay). */
  readonly mayWait: boolean;
  /** The step hands the function a signal of its own (a timeout's). */
  readonly ownSignal: boolean;
  /** The step may settle a call before its inner work ends (an aggressive timeout). */
  readonly settlesEarly: boolean;
  /**
   * The step may settle a call before its inner work ends when the function never read its
   * signal, so cannot stop when asked (a cooperative timeout).
   */
  readonly settlesWhenUnheard: boolean;
  /**
   * The step may run several attempts of its inner work at once (hedging): the executor runs
   * the steps inside it as a pipeline of their own, once per attempt.
   */
  readonly concurrentAttempts: boolean;
  /** The step keeps a number per call in the execution record (a token, a deadline). */
  readonly callSlot: boolean;
  /** The step keeps a time per call in the execution record (a retry's first start). */
  readonly timeSlot: boolean;
  /**
   * A gate reads the call's deadline when it admits it (see {@link BoundedCall}): the executor
   * then keeps the earliest deadline of the timeouts outside it. Optional for gates made
   * outside the library. @default false
   */
  readonly deadline?: boolean;
  /**
   * The gate wants the duration of calls that carry a deadline, for an estimate of how long calls
   * take that it compares deadlines with: the executor times some of them (one in four; each on
   * a clock that is cheap to read) and passes the duration to `release`. Optional for gates made
   * outside the library. @default false
   */
  readonly boundedLatency?: boolean;
  /**
   * The gate's `admit` may answer {@link ANSWERED} (see {@link AnsweringGate}). Optional for
   * gates made outside the library. @default false
   */
  readonly mayAnswer?: boolean;
}

/** Every answer false: a step spreads it and sets what it needs (`{ ...NEEDS_NOTHING, callSlot: true }`). */
export const NEEDS_NOTHING: StepNeeds = Object.freeze({
  startTime: false,
  endTime: false,
  mayWait: false,
  ownSignal: false,
  settlesEarly: false,
  settlesWhenUnheard: false,
  concurrentAttempts: false,
  callSlot: false,
  timeSlot: false,
  deadline: false,
  boundedLatency: false,
  mayAnswer: false,
});

/**
 * What a gate that asks for it (`needs().deadline`) learns of a call at admission: when the call
 * must be over. Only the general executor passes one; a call that cannot have a deadline (a
 * pipeline of gates alone, `executeSync`) passes none.
 */
export interface BoundedCall {
  /**
   * The earliest deadline bounding the call at this gate, on the pipeline's clock: the call's
   * own (`execute(fn, { timeout })`) or an outer timeout policy's; Infinity when none.
   */
  readonly bound: number;
}

/**
 * A policy that admits, refuses, makes wait or answers calls, known to the executor by this
 * protocol alone: the library's gates and any gate defined outside it.
 */
export interface Gate {
  readonly stepKind: typeof StepKind.Gate;
  /** True when `release` needs the call's duration (slow-call thresholds, latency). */
  readonly needsDuration: boolean;
  /** Time one call in this many for the gate's latency histogram (0: it keeps none). */
  readonly latencyEvery: number;
  /** True when `admit` can answer {@link WAIT}. */
  readonly mayWait: boolean;
  /** What it needs of the executor (see {@link StepNeeds}), asked when a pipeline is built. */
  needs(): StepNeeds;
  /**
   * Admits (a token >= 0), refuses ({@link REJECTED}), asks to wait ({@link WAIT}) or, for an
   * {@link AnsweringGate}, answers the call itself ({@link ANSWERED}).
   * `now` is the pipeline's clock reading, or {@link NO_TIME}; `level` is the call's
   * criticality, 0 (`sheddable`) to 3 (`critical-plus`), 2 (`critical`) unless it gave one;
   * `call` tells when the call must be over, when the executor has it (see {@link BoundedCall}).
   */
  admit(now: number, level: number, call?: BoundedCall): number;
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
  /** Releases what it holds (timers, waiters); `pipeline.dispose()` calls it. */
  dispose(): void;
}

/** What a gate needs from an execution waiting in its line (a queue or a reserved turn). */
export interface WaitingExecution {
  /** True while the execution still waits at `step` under `stamp`. */
  queueLive(step: number, stamp: number): boolean;
  /** The execution waiting at `step` may go on, with the gate's `token` (0 unless given). */
  queueAdmitted(step: number, token?: number): void;
  /** The execution waiting at `step` is refused. */
  queueRejected(step: number, error: Error): void;
}

/**
 * A gate whose `admit` may answer {@link WAIT} (`mayWait` true). `WaitLine` is a line such
 * a gate can keep its waiting calls in.
 */
export interface WaitingGate extends Gate {
  /** Puts `exec`, just told to wait at `step`, in line; returns its stamp. */
  enqueue(exec: WaitingExecution, step: number, now: number): number;
  /** An execution in line gave up (its signal aborted). */
  leave(): void;
}

/**
 * A gate whose `admit` may answer {@link ANSWERED} (`needs().mayAnswer` true): it ends some calls
 * with a value of its own instead of admitting them. The executor reads the value with
 * {@link answer} at once, and the call then unwinds as if its function had returned it: the
 * gates outside are released as after a success with that value (their `classifyResult` judges
 * it, so an injected value that a breaker counts as a failure is counted as one), a retry
 * outside retries it only when its `handleResult` asks to, and `tryExecute` resolves with
 * `{ ok: true, value }`. The answering gate took no permit and is not released. The value is
 * the call's result as it is: a promise is not awaited, so answer with a settled value.
 *
 * @example
 * ```ts
 * class Stub implements AnsweringGate {
 *   // ...the rest of Gate...
 *   needs(): StepNeeds {
 *     return { ...NEEDS_NOTHING, mayAnswer: true };
 *   }
 *   admit(): number {
 *     return ANSWERED;
 *   }
 *   answer(): unknown {
 *     return { stubbed: true };
 *   }
 * }
 * ```
 */
export interface AnsweringGate extends Gate {
  /** The value of the call `admit` just answered {@link ANSWERED}, asked once, right after. */
  answer(): unknown;
}
