import type { Clock } from '../clock/Clock.js';
import type { Criticality } from '../protocol/criticality.js';
import type { DurationString } from '../protocol/kind.js';

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
   * When the attempt must be over, on the pipeline's clock (the scale of `clock.now()`): the
   * earliest deadline that will stop it, of the `timeout` given to `execute` (from the call's
   * start) and of the timeout policies around the function (a timeout inside a retry or a
   * hedge gives each attempt its own). Infinity when there is none. Found at the first read
   * and fixed from then on.
   */
  readonly deadline: number;
  /**
   * Milliseconds left before {@link deadline}, never below 0, read when asked: what to pass on
   * downstream (a `grpc-timeout` header, another pipeline's `execute(fn, { timeout })`).
   * Infinity when nothing bounds the attempt.
   *
   * @example
   * ```ts
   * await p.execute(({ signal, timeLeft }) =>
   *   fetch(url, { signal, headers: { 'x-timeout-ms': String(Math.floor(timeLeft)) } }),
   *   { timeout: 800 },
   * );
   * ```
   */
  readonly timeLeft: number;
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
  /**
   * The most the call may take, all attempts and waits included, in ms or as a duration
   * (`"800ms"`, `"2s"`); Infinity (or left out) for none, so a `timeLeft` from another
   * call's context can be passed as it is. At the deadline the call rejects with a
   * `TimeoutError` (policy name `"execute"`), the function's signal aborts, and the work goes
   * on in the background, observed, with its permits held until it ends (a fallback producing
   * its value asynchronously at that time is waited for). A retry never waits
   * for a delay that would end past it: it gives up at once (reason `'deadline'`). 0 fails
   * the call at once without running it. A negative or non-numeric value rejects the call with an `OptionsError`.
   * @default Infinity
   */
  readonly timeout?: number | DurationString | 'Infinity';
  /**
   * How much the call matters when load must be shed: a load shedder refuses `sheddable` calls
   * first and `critical-plus` ones last (see `Criticality`). Other policies ignore it.
   * @default "critical"
   */
  readonly criticality?: Criticality;
  /**
   * The call's key. A coalescing step shares one run of the steps inside it among the calls in
   * flight with the same key (a call without one runs alone); through a `KeyedPipeline`, the
   * keyed steps use the instances of this key. Other policies ignore it.
   */
  readonly key?: string;
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
    /** The call's deadline, when it has one; the attempt's, once {@link bounds} answered. */
    private limit: CallDeadline | undefined,
    /**
     * Where the attempt's deadline is found, in a pipeline with timeout policies: asked once,
     * at the first read, so a function that never reads it costs no clock reading.
     */
    private bounds: AttemptBounds | undefined = undefined,
  ) {}

  get deadline(): number {
    const limit = this.bounds === undefined ? this.limit : this.resolve(this.bounds);
    return limit === undefined ? Number.POSITIVE_INFINITY : limit.at;
  }

  get timeLeft(): number {
    const limit = this.bounds === undefined ? this.limit : this.resolve(this.bounds);
    if (limit === undefined) return Number.POSITIVE_INFINITY;
    const left = limit.at - limit.clock.now();
    return Math.max(left, 0);
  }

  /** Fixes the attempt's deadline at its first read (an attempt already over keeps the call's). */
  private resolve(bounds: AttemptBounds): CallDeadline | undefined {
    this.bounds = undefined;
    const found = bounds.limitOf(this);
    if (found !== undefined) this.limit = found;
    return this.limit;
  }

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
 * @internal What finds the deadline of an attempt in flight: the earliest of the call's own and
 * those of the timeout policies around the attempt (the execution, or a hedge's race for the
 * attempts it runs itself).
 */
export interface AttemptBounds {
  /**
   * The deadline of `context`'s attempt; undefined when it has none, or when that attempt is
   * over (its context then keeps the call's deadline).
   */
  limitOf(context: AttemptContext): CallDeadline | undefined;
}

/**
 * @internal A call's deadline, made only for a call given one, so that a context holds one
 * reference rather than a number of its own (which V8 would box per context).
 */
export class CallDeadline {
  constructor(
    /** When the call must be over, on `clock`. */
    readonly at: number,
    readonly clock: Clock,
  ) {}
}

/**
 * @internal The context shared by the calls of pipelines that keep no per-call record (gates
 * that never wait). It cannot tell one call from another, so every read of `signal` makes a
 * new one that never aborts: listeners on it are garbage with the call that added them.
 */
class SharedContext implements ExecutionContext {
  readonly attempt = 1;
  readonly deadline = Number.POSITIVE_INFINITY;
  readonly timeLeft = Number.POSITIVE_INFINITY;
  readonly hedge = 0;
  get signal(): AbortSignal {
    return new AbortController().signal;
  }
}

/** @internal The one {@link SharedContext}: it holds nothing, so every pipeline passes it. */
export const SHARED_CONTEXT: ExecutionContext = new SharedContext();
