import type { Clock } from '../../clock/Clock.js';
import { OptionsError, UsageError } from '../../errors/OptionsError.js';
import { ask, type Disposer, Listeners } from '../../events/Listeners.js';
import type { Execution } from '../../pipeline/Execution.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { sleepBeforeRetry } from '../../pipeline/retrySleep.js';
import { NO_RETRY, type RetryingStep, type SleepingExecution } from '../../protocol/around.js';
import { brand } from '../../protocol/brand.js';
import type { AttemptBudget } from '../../protocol/budget.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import { NEEDS_NOTHING, StepKind, type StepNeeds } from '../../protocol/step.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import { onlyArguments } from '../../validation/validate.js';
import { askPushback } from '../shared/pushback.js';
import { checkIdentity, reconfigureWith } from '../shared/reconfigure.js';
import { backoffDelay } from './backoff.js';
import { retryChannel } from './diagnostics.js';
import { RetryExhaustedError } from './errors.js';
import type { GiveUpEvent, RetryEvent } from './events.js';
import { type ResolvedRetryOptions, type RetryOptions, resolveRetryOptions } from './options.js';

/** Counters of a retry policy since it was built. */
export interface RetryStats {
  /** Executions waiting out a retry delay now. */
  readonly waiting: number;
  /** Retries decided (each followed a failed attempt). */
  readonly retries: number;
  /**
   * Calls the policy gave up on: its attempts (`maxAttempts`) or time (`maxDuration`) ran out
   * on a failure it retries, the server's pushback said not to retry (or to wait longer than
   * `maxDelay`), or, after at least one retry, an attempt failed in a way it does
   * not retry (refused by the breaker it retries through, an error `handle` turns down). A
   * failure it never retried (a refusal by an open breaker, a full bulkhead or a rate limiter
   * on the first attempt, an error `handle` turns down) is not counted, and neither is a call
   * ended by the caller's signal or an outer deadline: `onGiveUp` sees those too, by reason.
   */
  readonly gaveUp: number;
}

/**
 * Runs the inner part of a pipeline again when it fails, after a backoff delay that waits on
 * the clock and stops at once when the caller's signal aborts. `T` is the result type of the
 * calls it retries, which `handleResult` and `retryAfter` see (`unknown` when not given); a
 * pipeline holding a `Retry<T>` accepts only functions whose result is a `T`.
 *
 * @example
 * ```ts
 * const p = pipeline(retry({ maxAttempts: 4, backoff: 'exponential', delay: 200 }), breaker);
 * await p.execute(({ attempt }) => callService(attempt));
 * ```
 */
export class Retry<T = unknown> extends RunsAlone implements RetryingStep {
  /** Type only: the result type, read by the pipeline's typing. Never set. */
  declare readonly [RESULT_TYPE]?: T;
  readonly stepKind = StepKind.Retry;
  readonly name: string;
  /** The clock the retry delays wait on. */
  readonly clock: Clock;
  /** @internal Replaced as a whole by `reconfigure`; every call reads it as before. */ o: ResolvedRetryOptions;
  /**
   * @internal True when `decide` needs elapsed time (a finite `maxDuration`). Pipelines read it
   * when they are built, so it never changes.
   */
  readonly needsTime: boolean;
  /** @internal The retry budget its retries spend from (option `budget`), fixed when built. */
  readonly budget: AttemptBudget | undefined;
  /** @internal Executions waiting out a delay of this policy. */
  readonly sleeping = new Set<SleepingExecution>();
  /** @internal */ readonly retried = new Listeners<RetryEvent>();
  /** @internal */ readonly gaveUp = new Listeners<GiveUpEvent>();
  private nRetries = 0;
  private nGaveUp = 0;
  /** Why the last `decide` that gave up did, read by `resultGivenUp` right after it. */
  private lastReason: GiveUpEvent['reason'] = 'max-attempts';

  constructor(options?: RetryOptions<T>) {
    super();
    onlyArguments(arguments, 1, 'new Retry()');
    this.o = resolveRetryOptions(options);
    this.name = this.o.name;
    this.clock = this.o.clock;
    this.needsTime = this.o.maxDuration !== Number.POSITIVE_INFINITY;
    this.budget = this.o.budget;
    if (options?.name !== undefined) noteCodeBuilt('retry', this.name, this);
  }

  /**
   * Applies new options to the retry decisions to come, including those of executions already
   * running (their attempt count and last delay are kept).
   *
   * `options` replace the current ones as a whole, as for the constructor: an option left out
   * takes its default. `name` and `clock` may be left out (they are kept) but not changed. A
   * finite `maxDuration` cannot be set on a policy built without one (pipelines built with it
   * do not record when the first attempt started); removing one is fine. The `budget` is kept
   * when left out, and cannot be changed.
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: RetryOptions<T>): void {
    reconfigureWith(this, resolveRetryOptions, options);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedRetryOptions): void {
    checkIdentity('retry policy', this.name, this.clock, o.name, o.clock);
    if (!this.needsTime && o.maxDuration !== Number.POSITIVE_INFINITY) {
      throw new OptionsError(
        'maxDuration',
        o.maxDuration,
        'Infinity: a policy built without a maxDuration cannot be given one (pipelines built with it do not record when attempts start); build a new policy',
      );
    }
    if (o.budget !== undefined && o.budget !== this.budget) {
      throw new OptionsError(
        'budget',
        o.budget,
        `${this.budget === undefined ? 'undefined' : 'the budget it was built with'} (a retry policy's budget cannot change: calls in progress count in it; build a new policy)`,
      );
    }
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedRetryOptions): void {
    this.o = o;
  }

  /** @internal What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return {
      ...NEEDS_NOTHING,
      startTime: this.needsTime,
      mayWait: true,
      callSlot: true,
      timeSlot: this.needsTime,
    };
  }

  /** Counters since the policy was built. */
  stats(): RetryStats {
    return { waiting: this.sleeping.size, retries: this.nRetries, gaveUp: this.nGaveUp };
  }

  /** Calls `listener` before each retry, with the attempt number and the delay. */
  onRetry(listener: (event: RetryEvent<T>) => void): Disposer {
    return this.retried.add(listener as (event: RetryEvent) => void);
  }

  /**
   * Calls `listener` whenever retrying stops on a failure, whatever the `reason`, including
   * failures it never retried (`stats().gaveUp` counts only the calls it gave up on).
   */
  onGiveUp(listener: (event: GiveUpEvent<T>) => void): Disposer {
    return this.gaveUp.add(listener as (event: GiveUpEvent) => void);
  }

  /**
   * Cancels every pending retry delay (those executions fail with a {@link UsageError}) and
   * removes all listeners. The policy stays usable.
   */
  dispose(): void {
    const error = new UsageError(`Retry policy "${this.name}" was disposed`);
    for (const exec of [...this.sleeping]) exec.abortWait(error);
    this.sleeping.clear();
    this.retried.clear();
    this.gaveUp.clear();
  }

  /** @internal True when a successful `value` should be retried. */
  retriesResult(value: unknown): boolean {
    const h = this.o.handleResult;
    // A predicate that throws does not retry.
    return h !== undefined && ask(h, value, false);
  }

  /**
   * @internal Given a failure of attempt `attempt`, the delay before the next attempt or
   * {@link NO_RETRY}. `isError` tells whether `detail` is an error or a result; `timeLeft` is
   * the time to the call's deadline (its own, or a timeout's that bounds every attempt).
   */
  decide(
    attempt: number,
    isError: boolean,
    detail: unknown,
    previousDelay: number,
    elapsed: number,
    aborted: boolean,
    timeLeft: number,
  ): number {
    const o = this.o;
    const budget = this.budget;
    // The attempt that failed was an extra one the budget granted.
    if (budget !== undefined && attempt > 1) budget.extraEnded();
    let reason: GiveUpEvent['reason'] | undefined;
    if (aborted) reason = 'aborted';
    else if (isError && !ask(o.handle, detail, false)) reason = 'not-handled';
    else {
      budget?.attemptFailed();
      if (attempt >= o.maxAttempts) reason = 'max-attempts';
    }
    let delay = 0;
    if (reason === undefined) {
      delay =
        o.retryAfter === undefined
          ? backoffDelay(o, attempt, previousDelay)
          : this.pushedDelay(o, attempt, isError, detail, previousDelay);
      if (delay === NO_RETRY) reason = 'pushback';
      else if (elapsed + delay >= o.maxDuration) reason = 'max-duration';
      else if (delay >= timeLeft) reason = 'deadline';
      // Asked last: only a retry that is sure to be made spends from the budget.
      else if (budget !== undefined && !budget.trySpend()) reason = 'budget-exhausted';
    }
    if (reason !== undefined) {
      budget?.callEnded();
      this.lastReason = reason;
      // A refusal or an unhandled error on the first attempt was never the policy's to retry,
      // and an abort is the caller's decision: neither is a give-up (see `RetryStats.gaveUp`).
      if (reason !== 'aborted' && (reason !== 'not-handled' || attempt > 1)) {
        this.nGaveUp++;
      }
      if (this.gaveUp.size !== 0) {
        this.gaveUp.emit(
          isError
            ? { attempts: attempt, error: detail, reason }
            : { attempts: attempt, result: detail, reason },
        );
      }
      return NO_RETRY;
    }
    this.nRetries++;
    if (this.retried.size !== 0) {
      this.retried.emit(
        isError ? { attempt, delay, error: detail } : { attempt, delay, result: detail },
      );
    }
    if (retryChannel.hasSubscribers) {
      retryChannel.publish({ name: this.name, attempt, delay, error: detail });
    }
    return delay;
  }

  /**
   * The delay after a failure given `retryAfter`: the larger of the pushback and the backoff
   * (so a pushback of 0 or a past date still backs off, and a longer backoff is not cut short),
   * the backoff alone when there is no valid pushback, {@link NO_RETRY} when the server said
   * not to retry or asked for more than `maxDelay`.
   */
  private pushedDelay(
    o: ResolvedRetryOptions,
    attempt: number,
    isError: boolean,
    detail: unknown,
    previousDelay: number,
  ): number {
    const pushed = askPushback(o.retryAfter!, isError, detail);
    if (pushed === false || (typeof pushed === 'number' && pushed > o.maxDelay)) return NO_RETRY;
    const backoff = backoffDelay(o, attempt, previousDelay);
    return typeof pushed === 'number' && pushed > backoff ? pushed : backoff;
  }

  /**
   * @internal The failure a call ends with when retrying stopped on `result` after `attempts`
   * attempts, with `lastResult: 'reject'`; undefined to end with the result itself.
   */
  resultGivenUp(result: unknown, attempts: number, aborted: boolean): Error | undefined {
    if (this.o.lastResult === 'resolve') return undefined;
    // The executor calls this right after `decide` gave up on that result, which it records.
    const last = this.lastReason;
    const reason = aborted
      ? 'aborted'
      : last === 'pushback' || last === 'deadline' || last === 'budget-exhausted'
        ? last
        : attempts >= this.o.maxAttempts
          ? 'max-attempts'
          : 'max-duration';
    return new RetryExhaustedError(this.name, result, attempts, reason);
  }

  /** @internal Waits out `delay` before the next attempt of `exec` (see `RetryingStep.sleep`). */
  sleep(exec: SleepingExecution, step: number, delay: number): Promise<unknown> {
    return sleepBeforeRetry(exec as Execution, step, delay);
  }

  /** @internal A wait for the next attempt ended by a deadline or the caller. */
  abortedWhileWaiting(attempts: number, reason: unknown): void {
    const budget = this.budget;
    if (budget !== undefined) {
      // The retry the budget granted will not be made.
      budget.extraEnded();
      budget.callEnded();
    }
    if (this.gaveUp.size !== 0) this.gaveUp.emit({ attempts, error: reason, reason: 'aborted' });
  }

  /** @internal Attempt `attempt` succeeded (a result it does not retry); only with a budget. */
  succeeded(attempt: number): void {
    const budget = this.budget!;
    budget.attemptSucceeded();
    if (attempt > 1) budget.extraEnded();
    budget.callEnded();
  }

  /**
   * @internal With a budget: the call ended (an outer deadline, the caller) while an attempt
   * was in flight; that attempt ends later, in {@link abandonedEnded}.
   */
  callCut(): void {
    this.budget!.callEnded();
  }

  /** @internal With a budget: attempt `attempt`, abandoned by {@link callCut}, really ended. */
  abandonedEnded(attempt: number): void {
    if (attempt > 1) this.budget!.extraEnded();
  }
}

brand(Retry, 'Retry');
