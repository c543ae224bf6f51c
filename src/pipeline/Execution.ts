import type { Clock, TimerHandle } from '../clock/Clock.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import {
  type CoalescingStep,
  type DeadlineStep,
  type FallbackStep,
  type HedgingStep,
  NO_RETRY,
  type RetryingStep,
  type TimedExecution,
} from '../protocol/around.js';
import { DEFAULT_LEVEL } from '../protocol/criticality.js';
import {
  ANSWERED,
  type AnsweringGate,
  type BoundedCall,
  type Gate,
  NO_TIME,
  StepKind,
  WAIT,
  type WaitingExecution,
  type WaitingGate,
} from '../protocol/step.js';
import { type AttemptBounds, AttemptContext, CallDeadline } from './context.js';
import type { HedgeRace } from './HedgeRace.js';
import type { LatencySampler } from './LatencySampler.js';
import { releaseCancelled, releaseFailed, releaseOk } from './release.js';
import { failure, isThenable, success } from './result.js';

/** A policy as the executor sees it: any policy a pipeline can hold. */
export type Step = Gate | RetryingStep | DeadlineStep | FallbackStep | HedgingStep | CoalescingStep;

/**
 * @internal What a call waits on while a step that runs the steps inside it itself holds it (a
 * hedge's race, a coalescing flight): the call's deadline or its caller's abort ends the wait.
 */
export interface InnerRun {
  /** `exec`, which waits on this run, is cut with `reason` (its deadline, its caller's abort). */
  cancel(reason: unknown, exec: Execution): void;
}

/**
 * @internal What a child execution (one that runs the steps inside such a step) reports to
 * instead of a caller: a hedge's race, a coalescing flight.
 */
export interface ChildOwner {
  /** The child `exec` ended (its outcome in `ok`/`value`). */
  childEnded(exec: Execution): void;
  /** The deadline bounding the call around the step that runs the child (Infinity for none). */
  outerBound(now: number): number;
  /** The context of attempt `n` (`n` > 0: a hedge) of the child. */
  contextOf(
    attempt: number,
    n: number,
    limit: CallDeadline | undefined,
    bounds: AttemptBounds,
  ): AttemptContext;
}

/** @internal Marks a step that keeps no per-call number. */
export const NO_SLOT = -1;

/** @internal What an execution needs from its pipeline, computed once when it is built. */
export interface PipelineCore {
  readonly steps: readonly Step[];
  /** The `stepKind` of each step, read from one monomorphic array on the hot path. */
  readonly kinds: Uint8Array;
  readonly clock: Clock;
  /** Some step needs the time a call starts: one reading is shared by all of them. */
  readonly needsStartTime: boolean;
  /** Records of finished executions, ready for the next call (see {@link Execution.recycle}). */
  readonly pool: Execution[];
  /** Some step needs the time every call ends (to time it). */
  readonly needsEndTime: boolean;
  /**
   * Picks the calls to time for latency histograms when no step needs every call timed
   * (undefined when no gate keeps one, or when every call is timed anyway).
   */
  readonly sampler: LatencySampler | undefined;
  /**
   * Picks the calls with a deadline to time for a gate that compares deadlines with their
   * durations (see `StepNeeds.boundedLatency`); undefined when no gate does.
   */
  readonly boundedSampler: LatencySampler | undefined;
  /**
   * Per step, the slot holding its per-call number (a breaker's generation, a timeout's or a
   * queue's stamp, a retry's attempt count), or {@link NO_SLOT}.
   */
  readonly slotOf: readonly number[];
  /** Per step, a second slot (a retry's start time when it has a max duration), or NO_SLOT. */
  readonly timeSlotOf: readonly number[];
  /**
   * The slot holding the attempt's start time (NO_TIME when this attempt is not timed), or
   * NO_SLOT when no gate times calls.
   */
  readonly startedSlot: number;
  /** Slots in all; the first four live in fields, the rest in an array. */
  readonly slotCount: number;
  /** An aggressive timeout may settle the call before the function does. */
  readonly deferred: boolean;
  /**
   * A cooperative timeout may settle the call before the function does if the function has
   * not read its signal: such a call turns deferred when its function returns a promise.
   */
  readonly deferredWhenUnheard: boolean;
  /** A timeout may abort the function's signal, so the function gets a signal of its own. */
  readonly ownSignal: boolean;
  /** Something can wait or abort, so the caller's signal must be listened to. */
  readonly listensToCaller: boolean;
  /**
   * Timeouts at an index below this one bound every attempt of a retry or a hedge, whose waits
   * must not end past their deadline: the index of the first retry or hedge, 0 when there is
   * none.
   */
  readonly boundsRetries: number;
  /**
   * Timeouts at an index below this one note their deadline for a step that reads it: the
   * larger of {@link boundsRetries} and the index after the last gate that reads the call's
   * deadline (every step's when such a gate is inside a hedge).
   */
  readonly boundsInner: number;
  /**
   * When the last step runs the steps inside it itself (a hedge, a coalescing step): the
   * pipeline of those steps, which runs each of its attempts or flights (the steps of this core
   * end at that step).
   */
  readonly inner: PipelineCore | undefined;
  /**
   * A coalescing step is here or inside: a call's `key` is kept for it (see `Detour.key`), and
   * handed on to the children that run the steps inside.
   */
  readonly takesKey: boolean;
  /** Races of finished calls through the hedge, ready for the next call. */
  readonly races: HedgeRace[];
  /**
   * A timeout policy may bound an attempt (here, or around the hedge that runs this core's
   * attempts): contexts find their deadline through the execution.
   */
  readonly timeoutsBound: boolean;
}

/** @internal Returned by the step functions when the execution finished synchronously. */
export const SYNC: unique symbol = Symbol('sync') as never;
/** @internal */
export type Next = typeof SYNC | Promise<unknown>;

/** @internal A timeout slot holding this has seen its deadline pass. */
export const PASSED = -2;
/**
 * @internal `cutAt` when nothing was cut: a small integer, so the field never holds a boxed
 * double.
 */
export const UNCUT = 0x3fffffff;

/** @internal */
export const F_OK = 1;
/** @internal */
export const F_DONE = 2;
const F_TRY = 4;
const F_IN_FLIGHT = 8;
/** The pipeline already picked this call to be timed (see {@link LatencySampler}). */
const F_TIMED = 16;
/** The caller awaits a promise of the execution's own, which it settles (deferred mode). */
const F_DEFERRED = 32;
/** The call has a deadline of its own (`execute(fn, { timeout })`). */
const F_DEADLINE = 64;
/**
 * @internal One attempt of a hedge's race or a coalescing flight: its end is reported to its
 * parent, not to a caller.
 */
export const F_CHILD = 128;

/**
 * @internal What the step walk returns while a hedge's race runs (or from a child attempt,
 * which settles its race rather than a promise): nothing awaits it for a value.
 */
export const RACING: Promise<unknown> = /* @__PURE__ */ Promise.resolve();

/** Records a pipeline keeps for reuse: enough for the calls one pipeline has in flight at once. */
const POOL_SIZE = 32;

/** An attempt abandoned by an aggressive timeout, still holding permits of the inner steps. */
interface Abandoned {
  readonly seq: number;
  readonly step: number;
  readonly slots: number[];
}

/**
 * @internal State only the slower paths need (waits, deadlines, cancellation, abandoned
 * attempts). Kept out of {@link Execution} so the record every call allocates stays small.
 */
export class Detour {
  waitResolve: (() => void) | undefined = undefined;
  waitReject: ((reason: unknown) => void) | undefined = undefined;
  waitTimer: TimerHandle | undefined = undefined;
  /** The step the execution waits at (a retry delay or a bulkhead queue), or -1. */
  waitStep = -1;
  /** Attempts abandoned so far; an attempt's handlers carry its number. */
  seq = 0;
  abandoned: Abandoned[] | undefined = undefined;
  abortReason: unknown = undefined;
  lastDelay = 0;
  callerAborted = false;
  /** Index of the outermost step whose deadline passed (-1 after a caller abort). */
  cutAt = UNCUT;
  /** The timer of the call's own deadline, until it fires or the call settles. */
  deadlineTimer: TimerHandle | undefined = undefined;
  /** The call's `key`, kept in a pipeline with a coalescing step (see `PipelineCore.takesKey`). */
  key: string | undefined = undefined;
}

let capturing: Detour | undefined;
function captureWait(resolve: () => void, reject: (reason: unknown) => void): void {
  capturing!.waitResolve = resolve;
  capturing!.waitReject = reject;
}
let capturingOuter: Execution | undefined;
function captureOuter(resolve: (value: unknown) => void, reject: (reason: unknown) => void): void {
  capturingOuter!.outerResolve = resolve;
  capturingOuter!.outerReject = reject;
}

/**
 * @internal One call through a pipeline. It walks the steps outer-to-inner on the way in
 * (`enter`) and inner-to-outer on the way out (`unwind`), in loops rather than nested async
 * wrappers, so an async call costs one promise reaction however many policies there are.
 *
 * A record serves one call at a time and is reused by later calls of its pipeline (see
 * {@link Execution.obtain} and {@link Execution.recycle}), so a call allocates neither it nor
 * the pair of promise handlers bound to it. What the function receives is a separate
 * {@link AttemptContext} per attempt: a function that keeps its context past the call never
 * sees the record serve another call. Per-step numbers live in four fields (an array only for
 * larger pipelines), flags share one integer, and what only waits, deadlines and cancellation
 * need lives in a {@link Detour} made on first use.
 *
 * Policies and queues that hold a record past the call (a deadline queue's entry not yet
 * dropped, a bulkhead queue's) recognise a reused one by its stamps: each registration gets a
 * new stamp, and an entry is live only while the record's slot still holds that stamp.
 */
export class Execution implements TimedExecution, WaitingExecution, BoundedCall, AttemptBounds {
  attempt = 1;
  value: unknown = undefined;
  /**
   * When the call must be over, on the core's clock (Infinity for never); before `run`, the
   * timeout given to the call in ms (see {@link limit}).
   */
  deadline = Number.POSITIVE_INFINITY;
  /** @internal The call's deadline as its contexts show it, for a call given one. */
  callDeadline: CallDeadline | undefined = undefined;
  /**
   * @internal The earliest deadline of the timeouts that bound every attempt of a retry or a
   * hedge (see `PipelineCore.boundsRetries`), which its waits must not pass either.
   */
  retryBound = Number.POSITIVE_INFINITY;
  /**
   * The earliest deadline bounding the attempt at the step being entered: the call's own and
   * those of the timeouts entered so far, kept only when a gate reads it (see `BoundedCall`).
   */
  bound = Number.POSITIVE_INFINITY;
  /** The call's criticality level (see `Gate.admit`). */
  level = DEFAULT_LEVEL;
  /** @internal */ flags = 0;
  private s0 = 0;
  private s1 = 0;
  private s2 = 0;
  private s3 = 0;
  private readonly more: number[] | undefined;
  /** @internal */ fn: ((context: AttemptContext) => unknown) | undefined = undefined;
  private callerSignal: AbortSignal | undefined = undefined;
  /** The context of the attempt in flight, until it ends or is abandoned. */
  /** @internal */ context: AttemptContext | undefined = undefined;
  /** @internal */ detour: Detour | undefined = undefined;
  /** @internal The hedge's race or the coalescing flight this call waits on, while it runs. */
  race: InnerRun | undefined = undefined;
  /** @internal A child attempt: the race or flight it reports to, until it ended. */
  parent: ChildOwner | undefined = undefined;
  /** @internal Which attempt of its race a child is (0 for the first, 1 for the first hedge...). */
  hedge = 0;
  /** @internal Deferred mode: the settle functions of the promise the caller awaits. */
  outerResolve: ((value: unknown) => void) | undefined = undefined;
  /** @internal */
  outerReject: ((reason: unknown) => void) | undefined = undefined;
  // Made once per record, not per call.
  private readonly onOk = (value: unknown): unknown => this.resume(0, true, value);
  private readonly onErr = (error: unknown): unknown => this.resume(0, false, error);

  private constructor(/** @internal */ readonly core: PipelineCore) {
    this.more = core.slotCount > 4 ? new Array(core.slotCount - 4).fill(0) : undefined;
  }

  /** A record for one call of `fn`: a pooled one, or a new one. */
  static obtain(
    core: PipelineCore,
    fn: (context: AttemptContext) => unknown,
    callerSignal: AbortSignal | undefined,
    tryMode: boolean,
  ): Execution {
    const exec = core.pool.length > 0 ? core.pool.pop()! : new Execution(core);
    exec.fn = fn;
    exec.callerSignal = callerSignal;
    exec.flags = tryMode ? F_TRY : 0;
    return exec;
  }

  /**
   * Gives the finished record back to its pipeline, emptied of the call's values so the pool
   * keeps nothing of them alive. Not called for a record with an abandoned attempt: its
   * handlers may still run.
   */
  recycle(): void {
    const pool = this.core.pool;
    if (pool.length >= POOL_SIZE) return;
    // The slots need no reset: a call writes each before it reads it, and a finished call
    // leaves its timeout slots at 0. `attempt` changes only in pipelines with a retry, whose
    // step sets it to 1 on the way in.
    this.value = undefined;
    this.fn = undefined;
    this.callerSignal = undefined;
    this.context = undefined;
    this.detour = undefined;
    this.outerResolve = undefined;
    this.outerReject = undefined;
    this.deadline = Number.POSITIVE_INFINITY;
    this.retryBound = Number.POSITIVE_INFINITY;
    this.bound = Number.POSITIVE_INFINITY;
    this.callDeadline = undefined;
    this.level = DEFAULT_LEVEL;
    pool.push(this);
  }

  /**
   * @internal Gives the call a deadline `ms` from its start (a finite number >= 0, checked by
   * the caller): it then settles by that time whatever its function does.
   */
  limit(ms: number): void {
    this.flags |= F_DEADLINE;
    this.deadline = ms;
  }

  /** @internal Times this call for latency histograms, whatever the sampler says. */
  markTimed(): void {
    this.flags |= F_TIMED;
  }

  /** True when the execution finished successfully (valid once it finished). */
  get ok(): boolean {
    return (this.flags & F_OK) !== 0;
  }

  /** Starts the execution: SYNC when it finished at once (see `ok`/`value`), else a promise. */
  run(): Next {
    const core = this.core;
    const signal = this.callerSignal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.value = signal.reason;
        this.flags = (this.flags & ~F_OK) | F_DONE;
        return SYNC;
      }
      if (this.listens()) signal.addEventListener('abort', this);
    }
    let now = core.needsStartTime ? core.clock.now() : NO_TIME;
    let outer: Promise<unknown> | undefined;
    if ((this.flags & F_DEADLINE) !== 0) {
      if (now === NO_TIME) now = core.clock.now();
      outer = this.startDeadline(now);
      if (outer === undefined) return SYNC;
    } else if (core.deferred) {
      outer = this.defer();
    }
    const next = this.enter(0, now);
    if (outer === undefined) {
      if (next === SYNC) this.cleanup();
      return next;
    }
    if (next === SYNC) this.settle();
    return outer;
  }

  /**
   * Turns the call's timeout into a deadline on the clock, armed on a timer of its own (the
   * call settles by then whatever its function does, so it runs deferred). Undefined when the
   * timeout is 0: the call failed at once.
   */
  private startDeadline(now: number): Promise<unknown> | undefined {
    const ms = this.deadline;
    if (ms <= 0) {
      this.value = callTimeoutError(ms);
      this.flags = (this.flags & ~F_OK) | F_DONE;
      this.removeCallerListener();
      return undefined;
    }
    this.deadline = now + ms;
    this.bound = this.deadline;
    this.callDeadline = new CallDeadline(this.deadline, this.core.clock);
    const outer = this.defer();
    this.d.deadlineTimer = this.core.clock.setTimer(() => this.deadlineExpired(ms), ms, false);
    return outer;
  }

  /** @internal Makes the promise the caller awaits, which {@link settle} settles. */
  defer(): Promise<unknown> {
    this.flags |= F_DEFERRED;
    if ((this.flags & F_CHILD) !== 0) return RACING;
    capturingOuter = this;
    const outer = new Promise(captureOuter);
    capturingOuter = undefined;
    return outer;
  }

  // ---- slots ---------------------------------------------------------------------------------

  /** @internal */
  get(k: number): number {
    switch (k) {
      case 0:
        return this.s0;
      case 1:
        return this.s1;
      case 2:
        return this.s2;
      case 3:
        return this.s3;
      default:
        return this.more![k - 4]!;
    }
  }

  /** @internal */
  set(k: number, v: number): void {
    switch (k) {
      case 0:
        this.s0 = v;
        break;
      case 1:
        this.s1 = v;
        break;
      case 2:
        this.s2 = v;
        break;
      case 3:
        this.s3 = v;
        break;
      default:
        if (k >= 4) this.more![k - 4] = v;
    }
  }

  private copySlots(): number[] {
    const out = [this.s0, this.s1, this.s2, this.s3];
    if (this.more !== undefined) out.push(...this.more);
    return out;
  }

  /** @internal The side record, made on first need. */
  get d(): Detour {
    let d = this.detour;
    if (d === undefined) {
      d = new Detour();
      this.detour = d;
    }
    return d;
  }

  // ---- the way in ----------------------------------------------------------------------------

  /** @internal */
  enter(from: number, now: number): Next {
    const core = this.core;
    const steps = core.steps;
    const kinds = core.kinds;
    for (let i = from; i < steps.length; i++) {
      const step = steps[i]!;
      // The kind comes from a typed array rather than from the policy objects, whose different
      // shapes would make that load polymorphic.
      switch (kinds[i]) {
        case StepKind.Gate: {
          const gate = step as Gate;
          const token = gate.admit(now, this.level, this);
          if (token >= 0) {
            this.set(core.slotOf[i]!, token);
            break;
          }
          if (token === WAIT) return this.waitInQueue(step as WaitingGate, i, now);
          // The gate's own value ends the call as a success would; it is not timed.
          if (token === ANSWERED) {
            return this.unwind(i - 1, true, (gate as AnsweringGate).answer(), NO_TIME);
          }
          return this.unwind(i - 1, false, gate.rejection(), now);
        }
        case StepKind.Retry:
          this.set(core.slotOf[i]!, 1);
          this.set(core.timeSlotOf[i]!, now);
          this.attempt = 1;
          (step as RetryingStep).budget?.callStarted();
          break;
        case StepKind.Timeout: {
          const timeout = step as DeadlineStep;
          this.set(core.slotOf[i]!, timeout.register(this, i, now));
          if (i < core.boundsInner) {
            if (now === NO_TIME) now = core.clock.now();
            const deadline = now + timeout.timeout;
            // A retry inside waits no delay that would end past this deadline, and a gate
            // inside that reads the call's deadline sees it.
            if (i < core.boundsRetries && deadline < this.retryBound) this.retryBound = deadline;
            if (deadline < this.bound) this.bound = deadline;
          }
          break;
        }
        case StepKind.Hedge: {
          // The race's code comes with the hedge policy: a program without one carries none.
          const race = (core.races.pop() ?? (step as HedgingStep).newRace(core.races)) as HedgeRace;
          return race.begin(this, i, step as HedgingStep, now);
        }
        case StepKind.Coalesce:
          // The flight's code comes with the coalescing policy, as the race's with the hedge.
          return (step as CoalescingStep).join(this, i, now) as Next;
      }
    }
    if (core.startedSlot !== NO_SLOT) {
      const bounded = core.boundedSampler;
      if (bounded !== undefined && this.bound !== Number.POSITIVE_INFINITY && bounded.due()) {
        this.flags |= F_TIMED;
      }
      this.set(core.startedSlot, this.attemptStart(now));
    }
    return this.call();
  }

  private call(): Next {
    const core = this.core;
    const context =
      this.hedge === 0
        ? new AttemptContext(
            this.attempt,
            core.ownSignal || (this.flags & F_DEADLINE) !== 0,
            this.callerSignal,
            this.callDeadline,
            core.timeoutsBound ? this : undefined,
          )
        : this.parent!.contextOf(this.attempt, this.hedge, this.callDeadline, this);
    const reason = this.detour?.abortReason;
    if (reason !== undefined) context.abort(reason);
    this.context = context;
    let result: unknown;
    let thenable: boolean;
    try {
      result = this.fn!(context);
      // In the try: reading `then` throws for a revoked Proxy or a stale immer draft, which
      // must fail the call like a throw, with every permit given back.
      thenable = isThenable(result);
    } catch (error) {
      return this.unwind(core.steps.length - 1, false, error, this.endTime());
    }
    if (thenable) {
      // Promise.resolve returns a native promise as it is and adopts any other thenable (whose
      // `then` may throw), an object made from Promise.prototype included: `instanceof` would
      // take that for a promise, and its `then` throws here.
      this.flags |= F_IN_FLIGHT;
      if ((this.flags & F_DEFERRED) !== 0) {
        if (this.detour === undefined) return Promise.resolve(result).then(this.onOk, this.onErr);
        // Attempts may be abandoned and overlap: each handler pair remembers its attempt.
        const seq = this.detour.seq;
        return Promise.resolve(result).then(
          (value) => this.resume(seq, true, value),
          (error) => this.resume(seq, false, error),
        );
      }
      if (core.deferredWhenUnheard && !context.heard) {
        // A function that has not read its signal by now may never hear a deadline: the
        // caller gets a promise the deadline can settle. One that read it keeps the cheap path.
        const outer = this.defer();
        Promise.resolve(result).then(this.onOk, this.onErr);
        return outer;
      }
      return Promise.resolve(result).then(this.onOk, this.onErr);
    }
    return this.unwind(core.steps.length - 1, true, result, this.endTime());
  }

  private resume(seq: number, ok: boolean, value: unknown): unknown {
    if (seq !== (this.detour?.seq ?? 0)) {
      this.finishAbandoned(seq, ok, value);
      return undefined;
    }
    this.flags &= ~F_IN_FLIGHT;
    return this.finishOrChain(this.unwind(this.core.steps.length - 1, ok, value, this.endTime()));
  }

  // ---- the deadline an attempt reads ----------------------------------------------------------

  /** @internal */
  limitOf(context: AttemptContext): CallDeadline | undefined {
    if (this.context !== context || (this.flags & F_DONE) !== 0) return undefined;
    const clock = this.core.clock;
    const at = this.timeoutBound(clock.now());
    if (at === Number.POSITIVE_INFINITY) return undefined;
    const own = this.callDeadline;
    return own !== undefined && own.at === at ? own : new CallDeadline(at, clock);
  }

  /**
   * @internal The earliest of the call's deadline and those of the timeouts the attempt in
   * flight is registered with (`now` is the clock's reading), those around a hedge included.
   */
  timeoutBound(now: number): number {
    const core = this.core;
    let at = this.deadline;
    for (let i = 0; i < core.steps.length; i++) {
      if (core.kinds[i] !== StepKind.Timeout) continue;
      const stamp = this.get(core.slotOf[i]!);
      if (stamp === PASSED) {
        if (now < at) at = now;
      } else if (stamp > 0) {
        const deadline = (core.steps[i] as DeadlineStep).deadlineOf(stamp, now);
        if (deadline < at) at = deadline;
      }
    }
    const race = this.parent;
    if (race !== undefined) {
      const outer = race.outerBound(now);
      if (outer < at) at = outer;
    }
    return at;
  }

  // ---- the way out ---------------------------------------------------------------------------

  /** @internal */
  unwind(from: number, ok: boolean, value: unknown, now: number): Next {
    const core = this.core;
    const steps = core.steps;
    const started = core.startedSlot === NO_SLOT ? NO_TIME : this.get(core.startedSlot);
    for (let i = from; i >= 0; i--) {
      const step = steps[i]!;
      switch (core.kinds[i]) {
        case StepKind.Gate: {
          const gate = step as Gate;
          const slot = core.slotOf[i]!;
          const token = slot === NO_SLOT ? 0 : this.get(slot);
          const elapsed = now === NO_TIME || started === NO_TIME ? Number.NaN : now - started;
          if (ok) releaseOk(gate, token, value, elapsed);
          else if (this.isCallerAbort(value)) releaseCancelled(gate, token, value, elapsed);
          else releaseFailed(gate, token, value, elapsed);
          break;
        }
        case StepKind.Timeout: {
          const timeout = step as DeadlineStep;
          const slot = core.slotOf[i]!;
          const stamp = this.get(slot);
          this.set(slot, 0);
          timeout.done(stamp);
          if (stamp === PASSED && !ok) {
            // Reject with the very error the signal was aborted with (they differ in debug mode).
            const reason = this.detour?.abortReason;
            value = timeout.ownsRejection(reason) ? reason : timeout.rejection();
          }
          break;
        }
        case StepKind.Retry: {
          const retry = step as RetryingStep;
          if (ok && !retry.retriesResult(value)) {
            if (retry.budget !== undefined) retry.succeeded(this.get(core.slotOf[i]!));
            break;
          }
          const slot = core.slotOf[i]!;
          const attempt = this.get(slot);
          const deadline = Math.min(this.deadline, this.retryBound);
          const bounded = deadline !== Number.POSITIVE_INFINITY;
          const t = now === NO_TIME && (retry.needsTime || bounded) ? core.clock.now() : now;
          const timeSlot = core.timeSlotOf[i]!;
          const first = timeSlot === NO_SLOT ? NO_TIME : this.get(timeSlot);
          const elapsed = t === NO_TIME || first === NO_TIME ? 0 : t - first;
          const d = this.d;
          const aborted = d.cutAt <= i;
          const left = bounded ? deadline - t : deadline;
          const delay = retry.decide(attempt, !ok, value, d.lastDelay, elapsed, aborted, left);
          if (delay === NO_RETRY) {
            if (ok) {
              const error = retry.resultGivenUp(value, attempt, aborted);
              if (error !== undefined) {
                ok = false;
                value = error;
              }
            }
            break;
          }
          this.set(slot, attempt + 1);
          d.lastDelay = delay;
          return retry.sleep(this, i, delay);
        }
        case StepKind.Fallback: {
          const fallback = step as FallbackStep;
          if (!fallback.applies(!ok, value)) break;
          let replacement: unknown;
          let thenable: boolean;
          try {
            replacement = fallback.produce(!ok, value);
            thenable = isThenable(replacement);
          } catch (error) {
            ok = false;
            value = error;
            break;
          }
          if (thenable) return fallback.adopt(this, i - 1, replacement);
          ok = true;
          value = replacement;
          break;
        }
      }
    }
    this.flags = ok ? this.flags | F_OK : this.flags & ~F_OK;
    this.value = value;
    return SYNC;
  }

  // ---- waiting: retry delays (`retrySleep.ts`) and queues ------------------------------------

  private waitInQueue(gate: WaitingGate, step: number, now: number): Next {
    const slot = this.core.slotOf[step]!;
    this.set(slot, gate.enqueue(this, step, now));
    return this.startWait(step).then(
      () => {
        const d = this.detour;
        // Admitted, but cancelled before this continuation ran: give the permit back.
        if (d !== undefined && d.cutAt <= step) {
          return this.finishOrChain(this.unwind(step, false, d.abortReason, this.endTime()));
        }
        return this.finishOrChain(this.enter(step + 1, this.time()));
      },
      (reason) => this.finishOrChain(this.unwind(step - 1, false, reason, this.endTime())),
    );
  }

  /** @internal */
  startWait(step: number): Promise<void> {
    const d = this.d;
    d.waitStep = step;
    capturing = d;
    const wait = new Promise<void>(captureWait);
    capturing = undefined;
    return wait;
  }

  /** @internal Ends the current wait; returns its resolve function. */
  endWait(): () => void {
    const d = this.d;
    d.waitStep = -1;
    return d.waitResolve!;
  }

  /** @internal */
  cancelWait(reason: unknown): void {
    const d = this.d;
    const step = d.waitStep;
    const s = this.core.steps[step]!;
    if (s.stepKind === StepKind.Gate) {
      this.set(this.core.slotOf[step]!, 0);
      (s as WaitingGate).leave();
    } else if (d.waitTimer !== undefined) {
      this.core.clock.clearTimer(d.waitTimer);
      d.waitTimer = undefined;
      (s as RetryingStep).sleeping.delete(this);
    }
    d.waitStep = -1;
    d.waitReject!(reason);
  }

  /** @internal The policy it waits on was disposed: stop waiting and fail with `reason`. */
  abortWait(reason: unknown): void {
    if (this.d.waitStep >= 0) this.cancelWait(reason);
  }

  /** @internal */
  queueLive(step: number, stamp: number): boolean {
    return this.detour?.waitStep === step && this.get(this.core.slotOf[step]!) === stamp;
  }

  /** @internal */
  queueAdmitted(step: number, token = 0): void {
    if (this.detour?.waitStep !== step) return;
    this.set(this.core.slotOf[step]!, token);
    this.endWait()();
  }

  /** @internal */
  queueRejected(step: number, error: Error): void {
    const d = this.d;
    if (d.waitStep !== step) return;
    this.set(this.core.slotOf[step]!, 0);
    d.waitStep = -1;
    d.waitReject!(error);
  }

  // ---- deadlines and cancellation ------------------------------------------------------------

  /**
   * The call's own deadline passed: everything is cut as by the caller's abort, except that the
   * call fails with a `TimeoutError`, a failure the gates count, and gives up on the attempt in
   * flight whether or not its function listens (the call settles by its deadline).
   */
  private deadlineExpired(ms: number): void {
    const d = this.d;
    d.deadlineTimer = undefined;
    if ((this.flags & F_DONE) !== 0 || d.callerAborted) return;
    const error = callTimeoutError(ms);
    d.cutAt = -1;
    this.abortAttempt(error);
    if (d.waitStep >= 0) this.cancelWait(error);
    else if (this.race !== undefined) this.race.cancel(error, this);
    else if (this.abandons(true)) this.abandon(-1, error);
  }

  /** Called when the caller's signal aborts (the execution is its own event listener). */
  handleEvent(): void {
    if ((this.flags & F_DONE) !== 0) return;
    const reason = this.callerSignal!.reason;
    const d = this.d;
    d.callerAborted = true;
    d.cutAt = -1;
    this.abortAttempt(reason);
    if (d.waitStep >= 0) this.cancelWait(reason);
    else if (this.race !== undefined) this.race.cancel(reason, this);
    else if (this.abandons(this.core.deferred)) this.abandon(-1, reason);
  }

  /**
   * @internal True when a deadline or the caller's abort gives up on the attempt in flight rather than
   * waiting for it: always when `aggressive`, else when its function never read the signal that
   * asks it to stop (reading it does not create it after an abort: `abort` only notes the reason).
   */
  abandons(aggressive: boolean): boolean {
    if ((this.flags & (F_IN_FLIGHT | F_DEFERRED)) !== (F_IN_FLIGHT | F_DEFERRED)) return false;
    return aggressive || this.context?.heard === false;
  }

  /** A failure that is the caller's own cancellation says nothing about the dependency. */
  private isCallerAbort(error: unknown): boolean {
    const signal = this.callerSignal;
    if (signal?.aborted === true && error === signal.reason) return true;
    // A hedge's attempt given up by its race (see `HedgeRace.cancelChild`).
    const d = this.detour;
    return d?.callerAborted === true && error === d.abortReason;
  }

  /** @internal */
  abortAttempt(reason: unknown): void {
    this.d.abortReason = reason;
    this.context?.abort(reason);
  }

  /**
   * @internal An aggressive timeout (or the caller) gives up on the attempt in flight. Its inner steps
   * keep their permits until the work really ends (`finishAbandoned`); the steps from `step`
   * outward go on now, possibly with a new attempt.
   */
  abandon(step: number, error: unknown): void {
    const d = this.d;
    (d.abandoned ??= []).push({ seq: d.seq, step, slots: this.copySlots() });
    // Invalidate the inner deadlines; they belong to the abandoned attempt.
    const steps = this.core.steps;
    for (let j = step + 1; j < steps.length; j++) {
      if (this.core.kinds[j] === StepKind.Timeout) this.set(this.core.slotOf[j]!, 0);
      else if (this.core.kinds[j] === StepKind.Retry) {
        // The call through the retry ends now; its attempt when the work does.
        const retry = steps[j] as RetryingStep;
        if (retry.budget !== undefined) retry.callCut();
      }
    }
    d.seq++;
    this.flags &= ~F_IN_FLIGHT;
    if (!d.callerAborted) {
      d.abortReason = undefined;
      this.context = undefined;
    }
    const next = step < 0 ? this.failNow(error) : this.unwind(step, false, error, this.endTime());
    this.finishOrChain(next);
  }

  private failNow(error: unknown): Next {
    this.flags &= ~F_OK;
    this.value = error;
    return SYNC;
  }

  private finishAbandoned(seq: number, ok: boolean, value: unknown): void {
    const list = this.d.abandoned!;
    const k = list.findIndex((a) => a.seq === seq);
    const record = list[k]!;
    list.splice(k, 1);
    const core = this.core;
    const steps = core.steps;
    const now = this.endTime();
    const since = core.startedSlot === NO_SLOT ? NO_TIME : record.slots[core.startedSlot]!;
    for (let i = steps.length - 1; i > record.step; i--) {
      const step = steps[i]!;
      if (step.stepKind === StepKind.Gate) {
        const slot = core.slotOf[i]!;
        const token = slot === NO_SLOT ? 0 : record.slots[slot]!;
        const elapsed = now === NO_TIME || since === NO_TIME ? Number.NaN : now - since;
        if (ok) releaseOk(step, token, value, elapsed);
        else if (this.isCallerAbort(value)) releaseCancelled(step, token, value, elapsed);
        else releaseFailed(step, token, value, elapsed);
      } else if (step.stepKind === StepKind.Timeout) {
        // Its deadline was given up when the attempt was abandoned.
        step.done(0);
      } else if (step.stepKind === StepKind.Retry && step.budget !== undefined) {
        step.abandonedEnded(record.slots[core.slotOf[i]!]!);
      }
    }
  }

  // ---- settling --------------------------------------------------------------------------------

  /**
   * @internal In a promise handler: turns a finished step walk into the handler's return value
   * (the result, or a throw), or passes a pending one on to be adopted.
   */
  finishOrChain(next: Next): unknown {
    if (next !== SYNC) return next;
    if ((this.flags & (F_DEFERRED | F_CHILD)) !== 0) {
      this.settle();
      return undefined;
    }
    this.cleanup();
    const flags = this.flags;
    const value = this.value;
    this.recycle();
    if ((flags & F_TRY) !== 0) return (flags & F_OK) !== 0 ? success(value) : failure(value);
    if ((flags & F_OK) !== 0) return value;
    throw value;
  }

  /** Deferred mode: settles the outer promise once. */
  private settle(): void {
    if ((this.flags & F_DONE) !== 0) return;
    if ((this.flags & F_CHILD) !== 0) {
      this.parent!.childEnded(this);
      return;
    }
    this.cleanup();
    const ok = (this.flags & F_OK) !== 0;
    if ((this.flags & F_TRY) !== 0)
      this.outerResolve!(ok ? success(this.value) : failure(this.value));
    else if (ok) this.outerResolve!(this.value);
    else this.outerReject!(this.value);
    // An abandoned attempt still in flight will come back to this record.
    if (this.detour?.abandoned === undefined || this.detour.abandoned.length === 0) this.recycle();
  }

  private cleanup(): void {
    this.flags |= F_DONE;
    this.removeCallerListener();
    const timer = this.detour?.deadlineTimer;
    if (timer !== undefined) {
      this.core.clock.clearTimer(timer);
      this.detour!.deadlineTimer = undefined;
    }
  }

  /** The call listens to its caller's signal: something can wait, abort or cut it. */
  private listens(): boolean {
    return this.core.listensToCaller || (this.flags & F_DEADLINE) !== 0;
  }

  private removeCallerListener(): void {
    const signal = this.callerSignal;
    if (signal !== undefined && this.listens()) signal.removeEventListener('abort', this);
  }

  /** @internal */
  time(): number {
    return this.core.needsStartTime ? this.core.clock.now() : NO_TIME;
  }

  /** @internal When this attempt is timed, its start time (`now` if read already), else NO_TIME. */
  attemptStart(now: number): number {
    const core = this.core;
    if (!core.needsEndTime) {
      if ((this.flags & F_TIMED) !== 0) this.flags &= ~F_TIMED;
      else if (core.sampler === undefined || !core.sampler.due()) return NO_TIME;
      if (now === NO_TIME) return core.clock.now();
    }
    return now;
  }

  /** @internal */
  endTime(): number {
    const core = this.core;
    if (core.needsEndTime) return core.clock.now();
    return core.startedSlot !== NO_SLOT && this.get(core.startedSlot) !== NO_TIME
      ? core.clock.now()
      : NO_TIME;
  }
}

/** The error a call fails with when the timeout given to `execute` passed. */
function callTimeoutError(ms: number): TimeoutError {
  return new TimeoutError('execute', ms, `The call's deadline passed: execute was given ${ms} ms`);
}
