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

/** A step that runs the inner steps again after a failure. */
export interface RetryingStep {
  readonly stepKind: typeof StepKind.Retry;
  /** @internal `decide` needs the elapsed time; read when a pipeline is built. */
  readonly needsTime: boolean;
  /** @internal Executions waiting out a delay now. */
  readonly sleeping: Set<SleepingExecution>;
  /**
   * @internal Waits `delay` ms, then runs the next attempt of `exec`, whose step `step` this
   * is: the executor's retry wait, which comes with the retry so that only programs with one
   * carry it.
   */
  sleep(exec: SleepingExecution, step: number, delay: number): Promise<unknown>;
  /**
   * @internal
   * The budget its retries spend from, or undefined. With one, the executor reports a call's
   * start, its success (`succeeded`), and a call cut while an attempt is in flight (`callCut`,
   * then `abandonedEnded` when that attempt ends); `decide` and `abortedWhileWaiting` report
   * the rest.
   */
  readonly budget: AttemptBudget | undefined;
  /** @internal With a budget: attempt `attempt` succeeded and the call ends with it. */
  succeeded(attempt: number): void;
  /** @internal With a budget: the call ended while an attempt was in flight. */
  callCut(): void;
  /** @internal With a budget: the attempt `attempt` in flight when the call was cut really ended. */
  abandonedEnded(attempt: number): void;
  /** @internal True when a successful result is to be retried. */
  retriesResult(value: unknown): boolean;
  /**
   * @internal
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
   * @internal
   * `decide` answered {@link NO_RETRY} on a `result` it retries after `attempts` attempts: the
   * error the call fails with instead, or undefined to end with the result.
   */
  resultGivenUp(result: unknown, attempts: number, aborted: boolean): Error | undefined;
  /** @internal A wait for the next attempt ended by a deadline or the caller: `attempts` were made. */
  abortedWhileWaiting(attempts: number, reason: unknown): void;
  /** @internal */
  needs(): StepNeeds;
  /** @internal */
  dispose(): void;
}

/**
 * @internal The execution a deadline step guards, which the step hands back to the executor's
 * deadline functions (`pipeline/timeoutDeadline.ts`) when the deadline is checked or passes.
 */
export interface TimedExecution {
  /** When the call must be over, on the clock (Infinity for never). */
  readonly deadline: number;
}

/** A step that gives the inner steps a deadline. */
export interface DeadlineStep {
  readonly stepKind: typeof StepKind.Timeout;
  /** @internal The call is given up at its deadline without waiting for the inner work to end. */
  readonly aggressive: boolean;
  /** @internal The time limit in ms a call registering now gets. */
  readonly timeout: number;
  /** @internal Starts the clock for `exec` at pipeline step `step`; returns the stamp. */
  register(exec: TimedExecution, step: number, now: number): number;
  /** @internal An execution stopped waiting on the deadline it registered with `stamp`. */
  done(stamp: number): void;
  /**
   * @internal
   * The deadline of the execution registered with `stamp`, on the clock whose reading is `now`
   * (fixing it if the step had not yet), or NaN when it is no longer held.
   */
  deadlineOf(stamp: number, now: number): number;
  /** @internal The error a call fails with at its deadline. */
  rejection(): Error;
  /** @internal True for an error this step aborted a call with. */
  ownsRejection(reason: unknown): boolean;
  /** @internal */
  needs(): StepNeeds;
  /** @internal */
  dispose(): void;
}

/** A step that replaces a failure (or a result) of the inner steps. */
export interface FallbackStep {
  readonly stepKind: typeof StepKind.Fallback;
  /** @internal True when this failure (or result) is replaced. */
  applies(isError: boolean, detail: unknown): boolean;
  /** @internal The replacement (may throw or return a promise). */
  produce(isError: boolean, detail: unknown): unknown;
  /**
   * @internal Awaits a replacement that is a promise (or another thenable), then unwinds the
   * execution `exec` from step `from` with its outcome: the executor's side of an asynchronous
   * fallback, which comes with the fallback so that only programs with one carry it.
   */
  adopt(exec: object, from: number, replacement: unknown): Promise<unknown>;
  /** @internal */
  needs(): StepNeeds;
  /** @internal */
  dispose(): void;
}

/** {@link HedgingStep.delayBefore} answers this when the next hedge waits for a failure. */
export const ON_FAILURE = -1;

/** {@link HedgingStep.pushback} answers this when the failure carries no pushback. */
export const NO_PUSHBACK = -1;

/**
 * Why a hedge started: its delay passed with no result, the attempt before it failed, or the
 * wait a failure's server pushback asked for passed.
 */
export type HedgeReason = 'delay' | 'failure' | 'pushback';

/** @internal A race of one call's attempts, as the hedge step's timers see it. */
export interface HedgeTimerTarget {
  /** True while the race still waits on the timer entry stamped `stamp`. */
  hedgeLive(stamp: number): boolean;
  /** The delay of the entry stamped `stamp` passed. */
  hedgeDue(stamp: number): void;
}

/**
 * A step that runs several attempts of the inner steps at once: a hedge. The executor
 * runs the race (see `HedgeRace`); the step decides when another attempt starts, what counts as
 * a failure, and keeps the budget, the timers and the counts.
 */
export interface HedgingStep {
  readonly stepKind: typeof StepKind.Hedge;
  /** @internal Extra attempts a call may start (read when each call's race begins). */
  readonly maxHedges: number;
  /** @internal Attempts are timed (a delay from observed latency): `attemptEnded` gets their duration. */
  readonly timesAttempts: boolean;
  /** @internal Reads the clock the step's delays run on. */
  now(): number;
  /**
   * @internal
   * The delay in ms before hedge `hedge` (1 for the first) starts, counted from the start of
   * the attempt before it, or {@link ON_FAILURE}. `attempt` is the call's attempt number (an
   * outer retry's); `now` the clock's reading when the step times attempts, else NaN.
   */
  delayBefore(hedge: number, attempt: number, now: number): number;
  /** @internal Arms `race`'s timer `delay` ms from now; returns the entry's stamp (never 0). */
  schedule(race: HedgeTimerTarget, delay: number): number;
  /**
   * @internal
   * Arms `race`'s timer for a server pushback's wait of `ms`, which need not be the step's
   * delay; returns the entry's stamp (never 0).
   */
  scheduleAfter(race: HedgeTimerTarget, ms: number): number;
  /**
   * @internal
   * The wait before the next hedge that a handled failure's server pushback asks for:
   * {@link NO_PUSHBACK} when it has none (the next hedge starts at once), `Infinity` when
   * no more hedges may start, else ms.
   */
  pushback(isError: boolean, detail: unknown): number;
  /** @internal The race no longer waits on the entry stamped `stamp`. */
  unschedule(stamp: number): void;
  /** @internal A call's race begins (its first attempt is about to start). */
  callStarted(): void;
  /** @internal Asks to start hedge `hedge`: false when the budget refuses it (counted by the step). */
  tryHedge(hedge: number, reason: HedgeReason): boolean;
  /**
   * @internal
   * How an attempt ended: true when it is a failure that starts the next hedge at once
   * (`handle` accepts the error, or `handleResult` rejects the result). A result it does not
   * reject, and an error it does not handle, end the race.
   */
  isHandledFailure(isError: boolean, detail: unknown): boolean;
  /**
   * @internal
   * Attempt `hedge` ended on its own (not cancelled): `success` when it gave an accepted result
   * (or a failure the step does not handle); `startedAt` is the clock's reading when it
   * started, or NaN when attempts are not timed.
   */
  attemptEnded(hedge: number, success: boolean, startedAt: number): void;
  /** @internal Extra attempt `hedge`, granted by `tryHedge`, really ended (cancelled ones included). */
  extraEnded(hedge: number): void;
  /** @internal The race settled: `winner` is the attempt whose outcome the call takes, or -1 (cancelled). */
  callEnded(winner: number): void;
  /** @internal The reason losers' signals abort with. */
  lostReason(): unknown;
  /**
   * @internal
   * A new record of one call's race for the executor, to go back to `pool` when done. The step
   * makes it, so the executor's race code comes with the hedge policy alone.
   */
  newRace(pool: object[]): object;
  /** @internal */
  needs(): StepNeeds;
  /** @internal */
  dispose(): void;
}

/**
 * A step that runs the steps inside it itself, once for every concurrent call with the same
 * key: a coalescing step. The executor hands it the call at its step ({@link join}); the step
 * runs (or shares) an execution of the inner steps and goes on outward with the call when that
 * ends or the call leaves (see `Flight`).
 */
export interface CoalescingStep {
  readonly stepKind: typeof StepKind.Coalesce;
  /**
   * @internal The execution `exec` reached this step, at index `step` of its pipeline: joins
   * the flight of its key, or starts one. Returns what the step walk returns. The code comes
   * with the coalescing policy, so that only programs with one carry it.
   */
  join(exec: object, step: number, now: number): unknown;
  /** @internal */
  needs(): StepNeeds;
  /** @internal */
  dispose(): void;
}
