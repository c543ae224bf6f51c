import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { deadlineLive, deadlinePassed } from '../../pipeline/timeoutDeadline.js';
import type { DeadlineStep, TimedExecution } from '../../protocol/around.js';
import { brand } from '../../protocol/brand.js';
import type { DurationString } from '../../protocol/kind.js';
import { NEEDS_NOTHING, NO_TIME, StepKind, type StepNeeds } from '../../protocol/step.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import { onlyArguments } from '../../validation/validate.js';
import { DeadlineQueue } from '../shared/DeadlineQueue.js';
import { checkIdentity, withIdentity } from '../shared/reconfigure.js';
import { timeoutChannel } from './diagnostics.js';
import { TimeoutError } from './errors.js';
import type { TimeoutEvent } from './events.js';
import {
  type ResolvedTimeoutOptions,
  resolveTimeoutOptions,
  type TimeoutOptions,
} from './options.js';

/** Counters of a timeout policy since it was built. */
export interface TimeoutStats {
  /** The time limit in ms. */
  readonly timeout: number;
  /** Calls whose deadline passed. */
  readonly timeouts: number;
}

/**
 * Limits how long the inner part of a pipeline may take. All in-flight calls of one timeout
 * share a single armed timer (their deadlines arrive in call order), so a timeout costs no
 * timer per call, and nothing is aborted on success.
 *
 * @example
 * ```ts
 * const p = pipeline(timeout(2_000), breaker);
 * await p.execute(({ signal }) => fetch(url, { signal }));
 * ```
 */
export class Timeout extends RunsAlone implements DeadlineStep {
  readonly stepKind = StepKind.Timeout;
  readonly name: string;
  /** The time limit in ms. */
  readonly timeout: number;
  /**
   * True for the aggressive strategy. Pipelines read it when they are built, so it never
   * changes: `reconfigure` cannot change the strategy.
   */
  readonly aggressive: boolean;
  // Replaced as a whole by `reconfigure`; every call reads it as before.
  private o: ResolvedTimeoutOptions;
  /** The clock this policy reads. */
  readonly clock: Clock;
  /**
   * @internal True when each call needs a clock reading to start its deadline: on a clock
   * that is cheap to read. Otherwise deadlines start at the next tick of the shared timer.
   */
  readonly needsStartTime: boolean;
  private error: TimeoutError;
  private queue: DeadlineQueue<TimedExecution>;
  /**
   * Queues of calls that started before the timeout was shortened: they keep their own
   * deadlines, and each queue empties itself as its timer fires.
   */
  private retired: DeadlineQueue<TimedExecution>[] | undefined = undefined;
  /** @internal */ readonly timedOut = new Listeners<TimeoutEvent>();
  private nTimeouts = 0;

  constructor(options: number | DurationString | TimeoutOptions) {
    super();
    onlyArguments(arguments, 1, 'new Timeout()');
    const o = resolveTimeoutOptions(options);
    this.o = o;
    this.name = o.name;
    this.timeout = o.timeout;
    this.aggressive = o.strategy === 'aggressive';
    this.clock = o.clock;
    this.needsStartTime = o.clock.cheapNow === true;
    this.error = stackless(() => new TimeoutError(o.name, o.timeout));
    this.queue = this.makeQueue(o.timeout);
    if (typeof options === 'object' && options.name !== undefined) {
      noteCodeBuilt('timeout', o.name, this);
    }
  }

  private makeQueue(ms: number): DeadlineQueue<TimedExecution> {
    return new DeadlineQueue<TimedExecution>(
      this.clock,
      ms,
      (exec, stamp, step) => deadlineLive(exec, step, stamp),
      (exec, _stamp, step) => {
        this.nTimeouts++;
        if (this.timedOut.size !== 0) {
          this.timedOut.emit({ timeout: this.timeout, strategy: this.o.strategy });
        }
        if (timeoutChannel.hasSubscribers) {
          timeoutChannel.publish({ name: this.name, timeout: this.timeout });
        }
        deadlinePassed(exec, step, this);
      },
      !this.needsStartTime,
    );
  }

  /**
   * Applies a new time limit to the calls that start from now on; calls in flight keep the
   * deadline they started with.
   *
   * `options` replace the current ones as a whole, as for the constructor (a number or a string is the
   * timeout): an option left out takes its default. `name` and `clock` may be left out (they
   * are kept) but not changed, and the strategy cannot change (pipelines built with the
   * policy depend on it).
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options: number | DurationString | TimeoutOptions): void {
    const o = resolveTimeoutOptions(
      typeof options === 'number' || typeof options === 'string'
        ? { timeout: options, strategy: this.o.strategy, name: this.name, clock: this.clock }
        : withIdentity(options, this.name, this.clock),
    );
    this.checkOptions(o);
    this.applyOptions(o);
  }

  /** @internal Throws {@link OptionsError} when resolved options `o` cannot replace these. */
  checkOptions(o: ResolvedTimeoutOptions): void {
    checkIdentity('timeout', this.name, this.clock, o.name, o.clock);
    if (o.strategy !== this.o.strategy) {
      throw new OptionsError(
        'strategy',
        o.strategy,
        `${JSON.stringify(this.o.strategy)} (the strategy cannot change: pipelines built with the policy depend on it; build a new one)`,
      );
    }
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedTimeoutOptions): void {
    const old = this.o;
    this.o = o;
    if (o.timeout === old.timeout) return;
    (this as { timeout: number }).timeout = o.timeout;
    this.error = stackless(() => new TimeoutError(o.name, o.timeout));
    if (o.timeout > old.timeout || this.queue.size === 0) {
      // Later deadlines for later calls keep the queue in deadline order.
      this.queue.setDuration(o.timeout, this.clock.now());
      return;
    }
    // Calls started under the longer timeout keep their deadlines in a queue of their own.
    const previous = this.queue;
    previous.prune();
    this.retired = (this.retired ?? []).filter((q) => q.size > 0);
    if (previous.size > 0) this.retired.push(previous);
    else previous.clear();
    this.queue = this.makeQueue(o.timeout);
    this.queue.continueStamps(previous);
  }

  /** Calls `listener` each time a deadline passes. */
  onTimeout(listener: (event: TimeoutEvent) => void): Disposer {
    return this.timedOut.add(listener);
  }

  /** @internal Starts the clock for `exec` at pipeline step `step`; returns the stamp. */
  register(exec: TimedExecution, step: number, now: number): number {
    return this.queue.add(
      exec,
      step,
      now === NO_TIME && this.needsStartTime ? this.clock.now() : now,
    );
  }

  /**
   * @internal An execution stopped waiting on the deadline it registered with `stamp` (0 when
   * it passed or was given up).
   */
  done(stamp: number): void {
    this.queue.release(stamp);
  }

  /**
   * @internal The deadline of the call registered with `stamp`, on the clock (`now` is its
   * reading), or NaN when it is no longer held.
   */
  deadlineOf(stamp: number, now: number): number {
    const at = this.queue.deadlineOf(stamp, now);
    if (!Number.isNaN(at) || this.retired === undefined) return at;
    for (const q of this.retired) {
      const old = q.deadlineOf(stamp, now);
      if (!Number.isNaN(old)) return old;
    }
    return Number.NaN;
  }

  /** @internal The error a timed-out call fails with. */
  rejection(): TimeoutError {
    return this.o.debug ? new TimeoutError(this.name, this.timeout) : this.error;
  }

  /** @internal True for an error this timeout aborted a call with. */
  ownsRejection(reason: unknown): boolean {
    return reason instanceof TimeoutError && reason.policyName === this.name;
  }

  /** @internal Deadlines held (finished ones not yet dropped included); for tests. */
  get pending(): number {
    let n = this.queue.size;
    if (this.retired !== undefined) for (const q of this.retired) n += q.size;
    return n;
  }

  /** @internal What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return {
      ...NEEDS_NOTHING,
      startTime: this.needsStartTime,
      ownSignal: true,
      settlesEarly: this.aggressive,
      settlesWhenUnheard: !this.aggressive,
      callSlot: true,
    };
  }

  /**
   * Forgets every pending deadline, cancels the timer and removes all listeners; calls in
   * flight no longer time out.
   */
  /** Counters since the policy was built. */
  stats(): TimeoutStats {
    return { timeout: this.timeout, timeouts: this.nTimeouts };
  }

  dispose(): void {
    this.queue.clear();
    if (this.retired !== undefined) for (const q of this.retired) q.clear();
    this.retired = undefined;
    this.timedOut.clear();
  }
}

brand(Timeout, 'Timeout');
