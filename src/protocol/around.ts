import type { AttemptBudget } from './budget.js';
import type { StepKind, StepNeeds } from './step.js';

/**
 * @internal The steps the executor runs around the inner ones, by what they do rather than by
 * their class: one that runs the inner steps again after a failure, one that gives them a
 * deadline, and one that replaces their failure. The library's retry, timeout and fallback are
 * the only ones today; a kind that runs its inner work in another way (hedging) adds its own.
 */

/** {@link RetryingStep.decide} answers this when the failure is final. */
export const NO_RETRY = -1;

/** @internal An execution waiting out a retry delay, which disposal ends. */
export interface SleepingExecution {
  abortWait(reason: unknown): void;
}

/** @internal A step that runs the inner steps again after a failure. */
export interface RetryingStep {
  readonly stepKind: typeof StepKind.Retry;
  /** `decide` needs the elapsed time; read when a pipeline is built. */
  readonly needsTime: boolean;
  /** Executions waiting out a delay now. */
  readonly sleeping: Set<SleepingExecution>;
  /**
   * The budget its retries spend from, or undefined. With one, the executor reports a call's
   * start, its success (`succeeded`), and a call cut while an attempt is in flight (`callCut`,
   * then `abandonedEnded` when that attempt ends); `decide` and `abortedWhileWaiting` report
   * the rest.
   */
  readonly budget: AttemptBudget | undefined;
  /** With a budget: attempt `attempt` succeeded and the call ends with it. */
  succeeded(attempt: number): void;
  /** With a budget: the call ended while an attempt was in flight. */
  callCut(): void;
  /** With a budget: the attempt `attempt` in flight when the call was cut really ended. */
  abandonedEnded(attempt: number): void;
  /** True when a successful result is to be retried. */
  retriesResult(value: unknown): boolean;
  /**
   * Given a failure of attempt `attempt`, the delay before the next attempt or
   * {@link NO_RETRY}. `isError` tells whether `detail` is an error or a result; `timeLeft` is
   * the time to the call's deadline (Infinity when it has none).
   */
  decide(
    attempt: number,
    isError: boolean,
    detail: unknown,
    previousDelay: number,
    elapsed: number,
    aborted: boolean,
    timeLeft: number,
  ): number;
  /**
   * `decide` answered {@link NO_RETRY} on a `result` it retries after `attempts` attempts: the
   * error the call fails with instead, or undefined to end with the result.
   */
  resultGivenUp(result: unknown, attempts: number, aborted: boolean): Error | undefined;
  /** A wait for the next attempt ended by a deadline or the caller: `attempts` were made. */
  abortedWhileWaiting(attempts: number, reason: unknown): void;
  needs(): StepNeeds;
  dispose(): void;
}

/** @internal What a deadline step needs from the execution it guards. */
export interface TimedExecution {
  /** True while the execution still waits on the deadline registered at `step` with `stamp`. */
  deadlineLive(step: number, stamp: number): boolean;
  /** The deadline registered at `step` has passed. */
  deadlinePassed(step: number, policy: DeadlineStep): void;
}

/** @internal A step that gives the inner steps a deadline. */
export interface DeadlineStep {
  readonly stepKind: typeof StepKind.Timeout;
  /** The call is given up at its deadline without waiting for the inner work to end. */
  readonly aggressive: boolean;
  /** The time limit in ms a call registering now gets. */
  readonly timeout: number;
  /** Starts the clock for `exec` at pipeline step `step`; returns the stamp. */
  register(exec: TimedExecution, step: number, now: number): number;
  /** An execution stopped waiting on the deadline it registered with `stamp`. */
  done(stamp: number): void;
  /** The error a call fails with at its deadline. */
  rejection(): Error;
  /** True for an error this step aborted a call with. */
  ownsRejection(reason: unknown): boolean;
  needs(): StepNeeds;
  dispose(): void;
}

/** @internal A step that replaces a failure (or a result) of the inner steps. */
export interface FallbackStep {
  readonly stepKind: typeof StepKind.Fallback;
  /** True when this failure (or result) is replaced. */
  applies(isError: boolean, detail: unknown): boolean;
  /** The replacement (may throw or return a promise). */
  produce(isError: boolean, detail: unknown): unknown;
  needs(): StepNeeds;
  dispose(): void;
}
