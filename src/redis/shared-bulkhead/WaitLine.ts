/**
 * The line of a Redis bulkhead's calls waiting in this process for a permit: first come, first
 * served, each until its queue timeout, and the waiter of an `acquire` call. Apart from the gate because its bookkeeping (skipping calls that left, the deadlines,
 * compaction) is its own; the gate decides when the line is served and how.
 */
import type { Clock } from '../../clock/Clock.js';
import { type DeadlineEntry, DeadlineFifo } from '../DeadlineFifo.js';
import type { Permit, RedisPermit } from './permit.js';

/** @internal Who waits for a permit: told once that it got one or that it never will. */
export interface Waiter {
  live(): boolean;
  admitted(permit: Permit): void;
  rejected(error: Error): void;
}

/** A place in the line; its deadline is the queue timeout's. */
class Entry implements DeadlineEntry {
  done = false;
  constructor(
    readonly waiter: Waiter,
    readonly deadline: number,
  ) {}
}

/** @internal An `acquire` call: a promise, and the caller's signal. */
export class PromiseWaiter implements Waiter {
  private done = false;
  constructor(
    private readonly resolve: (permit: RedisPermit) => void,
    private readonly reject: (error: unknown) => void,
    private readonly abortSignal: AbortSignal | undefined,
  ) {
    abortSignal?.addEventListener('abort', this.onAbort);
  }

  live(): boolean {
    return !this.done;
  }

  admitted(permit: Permit): void {
    this.end();
    this.resolve(permit);
  }

  rejected(error: Error): void {
    this.end();
    this.reject(error);
  }

  private end(): void {
    this.done = true;
    this.abortSignal?.removeEventListener('abort', this.onAbort);
  }

  private readonly onAbort = (): void => {
    if (!this.done) this.rejected(this.abortSignal!.reason);
  };
}

/** @internal */
export class WaitLine {
  private line: Entry[] = [];
  private head = 0;
  private readonly deadlines: DeadlineFifo<Entry>;

  constructor(
    private readonly clock: Clock,
    private readonly maxQueue: number,
    private readonly queueTimeout: number,
    /** A live waiter's queue timeout passed. */
    private readonly timedOut: (waiter: Waiter) => void,
  ) {
    this.deadlines = new DeadlineFifo(clock, this.expire);
  }

  /** Calls waiting now. */
  get length(): number {
    let n = 0;
    for (let i = this.head; i < this.line.length; i++) {
      const e = this.line[i]!;
      if (!e.done && e.waiter.live()) n++;
    }
    return n;
  }

  hasWaiting(): boolean {
    this.pruneHead();
    return this.head < this.line.length;
  }

  count(): number {
    this.pruneHead();
    return this.length;
  }

  /** A call may wait: `maxQueue` is above the calls waiting. */
  hasRoom(): boolean {
    return this.maxQueue > 0 && this.count() < this.maxQueue;
  }

  add(waiter: Waiter): void {
    const timed = this.queueTimeout !== Number.POSITIVE_INFINITY;
    const entry = new Entry(
      waiter,
      timed ? this.clock.now() + this.queueTimeout : Number.POSITIVE_INFINITY,
    );
    this.line.push(entry);
    if (timed) this.deadlines.add(entry);
  }

  /** The first live waiter, out of the line; undefined when none. */
  take(): Waiter | undefined {
    const line = this.line;
    while (this.head < line.length) {
      const e = line[this.head]!;
      line[this.head++] = undefined as unknown as Entry;
      if (e.done) continue;
      this.settle(e);
      if (e.waiter.live()) {
        this.compact();
        return e.waiter;
      }
    }
    this.line = [];
    this.head = 0;
    return undefined;
  }

  /** Empties the line and its deadlines (its waiters were taken and told). */
  clear(): void {
    this.line = [];
    this.head = 0;
    this.deadlines.drain();
  }

  private pruneHead(): void {
    const line = this.line;
    while (this.head < line.length) {
      const e = line[this.head]!;
      if (!e.done && e.waiter.live()) break;
      this.settle(e);
      line[this.head++] = undefined as unknown as Entry;
    }
    if (this.head === line.length) {
      this.line = [];
      this.head = 0;
    }
  }

  private settle(e: Entry): void {
    if (e.done) return;
    if (e.deadline !== Number.POSITIVE_INFINITY) this.deadlines.settle(e);
    else e.done = true;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.line.length) {
      this.line = this.line.slice(this.head);
      this.head = 0;
    }
  }

  private readonly expire = (entry: Entry): void => {
    if (entry.waiter.live()) this.timedOut(entry.waiter);
  };
}
