import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { NO_TIME, StepKind } from '../../pipeline/protocol.js';
import { DeadlineQueue } from './DeadlineQueue.js';
import { TimeoutError } from './errors.js';
import type { TimeoutEvent } from './events.js';
import {
  type ResolvedTimeoutOptions,
  resolveTimeoutOptions,
  type TimeoutOptions,
} from './options.js';

/** @internal What a timeout needs from the execution it guards. */
export interface TimedExecution {
  /** True while the execution still waits on the deadline registered at `step` with `stamp`. */
  deadlineLive(step: number, stamp: number): boolean;
  /** The deadline registered at `step` has passed. */
  deadlinePassed(step: number, policy: TimeoutPolicy): void;
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
export class TimeoutPolicy {
  readonly stepKind = StepKind.Timeout;
  readonly name: string;
  /** The time limit in ms. */
  readonly timeout: number;
  /** True for the aggressive strategy. */
  readonly aggressive: boolean;
  private readonly o: ResolvedTimeoutOptions;
  /** The clock this policy reads. */
  readonly clock: Clock;
  private readonly error: TimeoutError;
  private readonly queue: DeadlineQueue<TimedExecution>;
  /** @internal */ readonly timedOut = new Listeners<TimeoutEvent>();

  constructor(options: number | TimeoutOptions) {
    const o = resolveTimeoutOptions(options);
    this.o = o;
    this.name = o.name;
    this.timeout = o.timeout;
    this.aggressive = o.strategy === 'aggressive';
    this.clock = o.clock;
    this.error = stackless(() => new TimeoutError(o.name, o.timeout));
    this.queue = new DeadlineQueue<TimedExecution>(
      o.clock,
      o.timeout,
      (exec, stamp, step) => exec.deadlineLive(step, stamp),
      (exec, _stamp, step) => {
        if (this.timedOut.size !== 0) {
          this.timedOut.emit({ timeout: this.timeout, strategy: o.strategy });
        }
        exec.deadlinePassed(step, this);
      },
    );
  }

  /** Calls `listener` each time a deadline passes. */
  onTimeout(listener: (event: TimeoutEvent) => void): Disposer {
    return this.timedOut.add(listener);
  }

  /** @internal Starts the clock for `exec` at pipeline step `step`; returns the stamp. */
  register(exec: TimedExecution, step: number, now: number): number {
    return this.queue.add(exec, step, now === NO_TIME ? this.clock.now() : now);
  }

  /** @internal An execution stopped waiting on its deadline. */
  done(): void {
    this.queue.prune();
  }

  /** @internal The error a timed-out call fails with. */
  rejection(): TimeoutError {
    return this.o.debug ? new TimeoutError(this.name, this.timeout) : this.error;
  }

  /** @internal Deadlines held (finished ones not yet dropped included); for tests. */
  get pending(): number {
    return this.queue.size;
  }

  /**
   * Forgets every pending deadline, cancels the timer and removes all listeners; calls in
   * flight no longer time out.
   */
  dispose(): void {
    this.queue.clear();
    this.timedOut.clear();
  }
}
