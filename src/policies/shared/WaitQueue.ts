import type { Clock } from '../../clock/Clock.js';
import { OptionsError, UsageError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import { NO_TIME, type WaitingExecution } from '../../protocol/step.js';
import { duration, integer, oneOf } from '../../validation/validate.js';
import { DeadlineQueue } from './DeadlineQueue.js';

/**
 * The order in which a gate admits its waiting calls: `'fifo'` oldest first, `'lifo'` newest
 * first, `'codel'` oldest first until the queue stands (CoDel with adaptive LIFO).
 */
export type QueueDiscipline = 'fifo' | 'lifo' | 'codel';

/** Why a call waiting in a gate's queue was refused: past `queueTimeout`, or by CoDel. */
export type QueueRefusal = 'queue-timeout' | 'codel';

const DISCIPLINES: readonly QueueDiscipline[] = ['fifo', 'lifo', 'codel'];

/** The options of a gate whose calls may wait for a place (the bulkhead, the adaptive limit). */
export interface QueueOptions {
  /** Calls allowed to wait for a place, in [0, 2^31-1]; 0 refuses at once when full. @default 0 */
  readonly maxQueue?: number;
  /** Longest wait in the queue in ms, or Infinity. @default Infinity */
  readonly queueTimeout?: number | DurationString | 'Infinity';
  /**
   * Which waiting call a freed place goes to (needs `maxQueue` >= 1 unless `'fifo'`):
   * - `'fifo'`: the oldest.
   * - `'lifo'`: the newest, so in a burst the callers still waiting for an answer are served
   *   and the oldest wait out their `queueTimeout`.
   * - `'codel'`: CoDel with adaptive LIFO. While the queue has emptied within the last
   *   `codelInterval`, the oldest, within `queueTimeout`; once it has stood non-empty for
   *   `codelInterval`, the newest, and calls that waited longer than `codelTarget` are refused
   *   (reason `'codel'`) whenever a call arrives or a place frees. No admitted call then waits
   *   longer than `codelInterval`.
   * @default 'fifo'
   */
  readonly queue?: QueueDiscipline;
  /**
   * With `queue: 'codel'`: the queue time a call is given while the queue stands, in ms
   * (at least 1, below `codelInterval`). @default 5
   */
  readonly codelTarget?: number | DurationString;
  /**
   * With `queue: 'codel'`: how long the queue may stay non-empty before it counts as standing,
   * in ms (at least 2). @default 100
   */
  readonly codelInterval?: number | DurationString;
}

/** A gate's queue options, checked and resolved. */
export interface ResolvedQueueOptions {
  maxQueue: number;
  queueTimeout: number;
  queue: QueueDiscipline;
  codelTarget: number;
  codelInterval: number;
}

/** @internal The queue options' keys, as every queued gate's options list them. */
export const QUEUE_OPTION_KEYS = [
  'maxQueue',
  'queueTimeout',
  'queue',
  'codelTarget',
  'codelInterval',
] as const;

/** @internal Defaults of the queue options (no queue, FIFO, CoDel per Fail at Scale). */
export const queueDefaults = Object.freeze({
  maxQueue: 0,
  queueTimeout: Number.POSITIVE_INFINITY,
  queue: 'fifo' as QueueDiscipline,
  codelTarget: 5,
  codelInterval: 100,
});

const MAX_INT32 = 2_147_483_647;

/** @internal Checks and resolves the queue options of `o` (a gate's options object). */
export function resolveQueueOptions(o: {
  readonly maxQueue?: unknown;
  readonly queueTimeout?: unknown;
  readonly queue?: unknown;
  readonly codelTarget?: unknown;
  readonly codelInterval?: unknown;
}): ResolvedQueueOptions {
  const d = queueDefaults;
  const maxQueue = integer(o.maxQueue, 'maxQueue', d.maxQueue, 0, MAX_INT32);
  const queue = oneOf(o.queue, 'queue', d.queue, DISCIPLINES);
  if (queue !== 'fifo' && maxQueue === 0) {
    throw new OptionsError(
      'queue',
      queue,
      '"fifo" while maxQueue is 0 (no call waits, so there is no queue to order); give maxQueue >= 1',
    );
  }
  if (queue !== 'codel') {
    for (const field of ['codelTarget', 'codelInterval'] as const) {
      if (o[field] !== undefined) {
        throw new OptionsError(field, o[field], `not set: it applies only with queue: "codel"`);
      }
    }
  }
  const codelInterval = duration(o.codelInterval, 'codelInterval', d.codelInterval, 2);
  const codelTarget = duration(
    o.codelTarget,
    'codelTarget',
    d.codelTarget,
    1,
    false,
    codelInterval - 1,
  );
  return {
    maxQueue,
    queueTimeout: duration(o.queueTimeout, 'queueTimeout', d.queueTimeout, 1, true),
    queue,
    codelTarget,
    codelInterval,
  };
}

/**
 * @internal The wait queue of a gate (a bulkhead, an adaptive limit): calls that found no
 * permit wait here for one, and leave when their signal aborts, their `queueTimeout` passes
 * (all timeouts share one timer, see {@link DeadlineQueue}) or CoDel refuses them. The gate
 * owns the permits: it asks {@link canWait} when full, {@link add}s the waiter, and when a
 * permit frees it takes waiters in the discipline's order with {@link next} and admits them.
 * CoDel sets no timer of its own: it checks the waiting calls' ages when a call arrives or a
 * permit frees.
 *
 * Each entry carries a tag, which the gate chooses (the pipeline step it waits at, and what
 * else it needs back when the call leaves the queue).
 */
export class WaitQueue {
  /** @internal The ring (a test reads its size, dead entries included). */
  readonly q: DeadlineQueue<WaitingExecution>;
  /** Calls waiting now (the ring may hold dead entries besides). */
  length = 0;
  private o: ResolvedQueueOptions;
  /** True with `queue: 'codel'`: arrivals and a full queue then check the waiting calls' ages. */
  private codel: boolean;
  /** CoDel: when the queue last went from empty to non-empty (valid while `length > 0`). */
  private nonEmptySince = 0;
  /** Tag of the entry {@link next} returned last. */
  takenTag = 0;
  /** Made when first needed: most queues never refuse for CoDel. */
  private refuseStale: ((exec: WaitingExecution, stamp: number, tag: number) => void) | undefined =
    undefined;

  /**
   * `stepOf` turns a tag back into the step the call waits at; `refuse` counts a refusal of a
   * waiting call for `reason` and returns the error it fails with.
   */
  constructor(
    private readonly clock: Clock,
    o: ResolvedQueueOptions,
    private readonly stepOf: (tag: number) => number,
    private readonly refuse: (reason: QueueRefusal, tag: number) => Error,
  ) {
    this.o = o;
    this.q = new DeadlineQueue<WaitingExecution>(
      clock,
      o.queueTimeout,
      (exec, stamp, tag) => exec.queueLive(stepOf(tag), stamp),
      (exec, _stamp, tag) => {
        this.length--;
        exec.queueRejected(stepOf(tag), refuse('queue-timeout', tag));
      },
    );
    this.codel = o.queue === 'codel';
    if (this.codel) this.q.keepArrivals(0);
  }

  /**
   * With `queue: 'codel'`, true while the queue has stood non-empty for `codelInterval`;
   * false otherwise.
   */
  get dropping(): boolean {
    return this.codel && this.length > 0 && this.standing(this.clock.now());
  }

  /**
   * True when a call that found no permit may wait: the queue has room, or (CoDel) makes room
   * by refusing the calls that waited past their target while it stands.
   */
  canWait(now: number): boolean {
    if (this.length < this.o.maxQueue) return true;
    if (!this.codel) return false;
    this.shed(now === NO_TIME ? this.clock.now() : now);
    return this.length < this.o.maxQueue;
  }

  /** Puts `exec` in line with `tag`; returns its stamp. */
  add(exec: WaitingExecution, tag: number, now: number): number {
    if (this.codel) {
      const t = now === NO_TIME ? this.clock.now() : now;
      this.shed(t);
      if (this.length === 0) this.nonEmptySince = t;
      this.length++;
      const stamp = this.q.add(exec, tag, t);
      this.q.noteArrival(t);
      return stamp;
    }
    this.length++;
    const timed = this.o.queueTimeout !== Number.POSITIVE_INFINITY;
    return this.q.add(exec, tag, timed && now === NO_TIME ? this.clock.now() : now);
  }

  /** A queued call gave up (its signal aborted). */
  leave(): void {
    this.length--;
    this.q.prune();
    // LIFO leaves dead entries below live ones, out of reach of the head.
    if (this.q.size > 2 * this.length + 16) this.q.compact();
  }

  /**
   * Whether the next calls to admit are the newest: always with LIFO, and with CoDel while the
   * queue stands (it then first refuses the calls that waited past their target). Asked once
   * before a run of {@link next} calls.
   */
  newestFirst(): boolean {
    const discipline = this.o.queue;
    return discipline === 'lifo' || (discipline === 'codel' && this.shed(this.clock.now()));
  }

  /**
   * Removes and returns the next live waiter (the newest when `newest`, else the oldest), its
   * tag in {@link takenTag}; undefined when none is left.
   */
  next(newest: boolean): WaitingExecution | undefined {
    const q = this.q;
    const exec = newest ? q.takeLastLive() : q.takeFirstLive();
    if (exec !== undefined) {
      this.length--;
      this.takenTag = q.takenTag;
    }
    return exec;
  }

  /**
   * Takes new options: a shorter `queueTimeout` applies to the calls already queued (counted
   * from now), a longer one to the calls queued from now on. A change to `'codel'` counts the
   * calls already queued as arriving now, and the queue as non-empty since now.
   */
  setOptions(o: ResolvedQueueOptions): void {
    const old = this.o;
    this.o = o;
    if (o.queueTimeout !== old.queueTimeout) this.q.setDuration(o.queueTimeout, this.clock.now());
    const codel = o.queue === 'codel';
    if (codel && !this.codel) {
      const now = this.clock.now();
      this.q.keepArrivals(now);
      this.nonEmptySince = now;
    }
    this.codel = codel;
  }

  /** Refuses every waiting call with a {@link UsageError} naming `owner`, and stops the timer. */
  dispose(owner: string): void {
    const error = new UsageError(`${owner} was disposed`);
    for (let exec = this.q.takeFirstLive(); exec !== undefined; exec = this.q.takeFirstLive()) {
      this.length--;
      exec.queueRejected(this.stepOf(this.q.takenTag), error);
    }
    this.q.clear();
  }

  /** True when the (non-empty) queue has not been empty within the last `codelInterval`. */
  private standing(now: number): boolean {
    return now - this.nonEmptySince >= this.o.codelInterval;
  }

  /**
   * CoDel: when the queue stands, refuses the calls that have waited longer than `codelTarget`
   * and returns true (the queue is then served newest first); otherwise returns false.
   */
  private shed(now: number): boolean {
    if (this.length === 0 || !this.standing(now)) return false;
    this.q.dropArrivedBefore(
      now - this.o.codelTarget,
      (this.refuseStale ??= (exec, _stamp, tag) => {
        this.length--;
        exec.queueRejected(this.stepOf(tag), this.refuse('codel', tag));
      }),
    );
    return true;
  }
}
