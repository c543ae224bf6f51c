import type { Clock, TimerHandle } from '../clock/Clock.js';
import type { Bulkhead, QueuedExecution } from '../policies/bulkhead/Bulkhead.js';
import type { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import type { FallbackPolicy } from '../policies/fallback/FallbackPolicy.js';
import { NO_RETRY, type RetryPolicy } from '../policies/retry/RetryPolicy.js';
import type { TimedExecution, TimeoutPolicy } from '../policies/timeout/TimeoutPolicy.js';
import { type ExecutionContext, neverAbortedSignal } from './context.js';
import { NO_TIME, Outcome, StepKind, WAIT } from './protocol.js';
import { failure, isThenable, success } from './result.js';

/** @internal A policy as the executor sees it. */
export type Step = CircuitBreaker | Bulkhead | RetryPolicy | TimeoutPolicy | FallbackPolicy;

/** @internal What an execution needs from its pipeline, computed once when it is built. */
export interface PipelineCore {
  readonly steps: readonly Step[];
  readonly clock: Clock;
  /** Some step needs the time a call starts: one reading is shared by all of them. */
  readonly needsStartTime: boolean;
  /** Some step needs the time a call ends (to time it). */
  readonly needsEndTime: boolean;
  /**
   * A double-typed array of the right length, copied for each execution: a copy keeps the
   * element kind, so storing times never converts the array.
   */
  readonly slotTemplate: readonly number[];
  /** An aggressive timeout may settle the call before the function does. */
  readonly deferred: boolean;
  /** A timeout may abort the function's signal, so the function gets a signal of its own. */
  readonly ownSignal: boolean;
  /** Something can wait or abort, so the caller's signal must be listened to. */
  readonly listensToCaller: boolean;
}

/** @internal Returned by the step functions when the execution finished synchronously. */
export const SYNC: unique symbol = Symbol('sync') as never;
type Next = typeof SYNC | Promise<unknown>;

/** Slots per step in `slots`: a token or stamp, and a time. The last slot is the attempt's start. */
const W = 2;
/** `cutAt` when nothing was cut: a small integer, so the field never holds a boxed double. */
const UNCUT = 0x3fffffff;
/** A timeout slot holding this has seen its deadline pass. */
const PASSED = -2;

/** An attempt abandoned by an aggressive timeout, still holding permits of the inner steps. */
interface Abandoned {
  readonly seq: number;
  readonly step: number;
  readonly slots: number[];
}

/**
 * State only the slower paths need (waits, deadlines, cancellation, abandoned attempts). Kept
 * out of {@link Execution} so the record every call allocates stays small.
 */
class Detour {
  waitResolve: (() => void) | undefined = undefined;
  waitReject: ((reason: unknown) => void) | undefined = undefined;
  outerResolve: ((value: unknown) => void) | undefined = undefined;
  outerReject: ((reason: unknown) => void) | undefined = undefined;
  waitTimer: TimerHandle | undefined = undefined;
  /** The step the execution waits at (a retry delay or a bulkhead queue), or -1. */
  waitStep = -1;
  abandoned: Abandoned[] | undefined = undefined;
  abortReason: unknown = undefined;
  lastDelay = 0;
  callerAborted = false;
  /** Index of the outermost step whose deadline passed (-1 after a caller abort). */
  cutAt = UNCUT;
}

let capturing: Detour | undefined;
function captureWait(resolve: () => void, reject: (reason: unknown) => void): void {
  capturing!.waitResolve = resolve;
  capturing!.waitReject = reject;
}
function captureOuter(resolve: (value: unknown) => void, reject: (reason: unknown) => void): void {
  capturing!.outerResolve = resolve;
  capturing!.outerReject = reject;
}

/**
 * @internal One call through a pipeline. It walks the steps outer-to-inner on the way in
 * (`enter`) and inner-to-outer on the way out (`unwind`), in loops rather than nested async
 * wrappers, so an async call costs one promise reaction however many policies there are.
 * The execution is also the context handed to the function, so no second object is needed.
 */
export class Execution implements ExecutionContext, TimedExecution, QueuedExecution {
  attempt = 1;
  ok = false;
  value: unknown = undefined;

  private readonly slots: number[];
  private controller: AbortController | undefined = undefined;
  private inFlight = false;
  private seq = 0;
  private done = false;
  private detour: Detour | undefined = undefined;

  constructor(
    private readonly core: PipelineCore,
    private readonly fn: (context: ExecutionContext) => unknown,
    private readonly callerSignal: AbortSignal | undefined,
    private readonly tryMode: boolean,
  ) {
    this.slots = core.slotTemplate.slice();
  }

  /** The side record, made on first need. */
  private get d(): Detour {
    let d = this.detour;
    if (d === undefined) {
      d = new Detour();
      this.detour = d;
    }
    return d;
  }

  get signal(): AbortSignal {
    let c = this.controller;
    if (c === undefined) {
      if (!this.core.ownSignal) return this.callerSignal ?? neverAbortedSignal();
      c = new AbortController();
      this.controller = c;
      const reason = this.detour?.abortReason;
      if (reason !== undefined) c.abort(reason);
    }
    return c.signal;
  }

  /** Starts the execution: SYNC when it finished at once (see `ok`/`value`), else a promise. */
  run(): Next {
    const core = this.core;
    const signal = this.callerSignal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.ok = false;
        this.value = signal.reason;
        this.done = true;
        return SYNC;
      }
      if (core.listensToCaller) signal.addEventListener('abort', this);
    }
    let outer: Promise<unknown> | undefined;
    if (core.deferred) {
      capturing = this.d;
      outer = new Promise(captureOuter);
      capturing = undefined;
    }
    const next = this.enter(0, core.needsStartTime ? core.clock.now() : NO_TIME);
    if (outer === undefined) {
      if (next === SYNC) this.cleanup();
      return next;
    }
    if (next === SYNC) this.settle();
    return outer;
  }

  // ---- the way in ----------------------------------------------------------------------------

  private enter(from: number, now: number): Next {
    const steps = this.core.steps;
    const slots = this.slots;
    for (let i = from; i < steps.length; i++) {
      const step = steps[i]!;
      switch (step.stepKind) {
        case StepKind.Gate: {
          const token = step.acquire(now);
          if (token >= 0) {
            slots[i * W] = token;
            break;
          }
          if (token === WAIT) return this.waitInQueue(step as Bulkhead, i, now);
          return this.unwind(i - 1, false, step.rejection(), now);
        }
        case StepKind.Retry:
          slots[i * W] = 1;
          slots[i * W + 1] = now;
          this.attempt = 1;
          break;
        case StepKind.Timeout:
          slots[i * W] = step.register(this, i, now);
          break;
      }
    }
    slots[steps.length * W] = now;
    return this.call();
  }

  private call(): Next {
    const core = this.core;
    let result: unknown;
    try {
      result = this.fn(this);
    } catch (error) {
      return this.unwind(core.steps.length - 1, false, error, this.endTime());
    }
    if (isThenable(result)) {
      this.inFlight = true;
      if (this.core.deferred) {
        // Attempts may be abandoned and overlap: each handler pair remembers its attempt.
        const seq = this.seq;
        return Promise.resolve(
          result.then(
            (value) => this.resume(seq, true, value),
            (error) => this.resume(seq, false, error),
          ),
        );
      }
      // Bound methods cost less memory than a pair of closures sharing a context.
      return Promise.resolve(result.then(this.resumeOk.bind(this), this.resumeErr.bind(this)));
    }
    return this.unwind(core.steps.length - 1, true, result, this.endTime());
  }

  private resumeOk(value: unknown): unknown {
    return this.resume(this.seq, true, value);
  }

  private resumeErr(error: unknown): unknown {
    return this.resume(this.seq, false, error);
  }

  private resume(seq: number, ok: boolean, value: unknown): unknown {
    if (seq !== this.seq) {
      this.finishAbandoned(seq, ok, value);
      return undefined;
    }
    this.inFlight = false;
    const core = this.core;
    return this.finishOrChain(this.unwind(core.steps.length - 1, ok, value, this.endTime()));
  }

  // ---- the way out ---------------------------------------------------------------------------

  private unwind(from: number, ok: boolean, value: unknown, now: number): Next {
    const steps = this.core.steps;
    const slots = this.slots;
    for (let i = from; i >= 0; i--) {
      const step = steps[i]!;
      switch (step.stepKind) {
        case StepKind.Gate: {
          const outcome =
            !ok && this.detour?.callerAborted === true && value === this.callerSignal!.reason
              ? Outcome.Ignored
              : ok
                ? step.classifyResult(value)
                : step.classifyError(value);
          const since = slots[steps.length * W]!;
          step.release(
            slots[i * W]!,
            outcome,
            now === NO_TIME || since === NO_TIME ? Number.NaN : now - since,
            value,
          );
          break;
        }
        case StepKind.Timeout: {
          const passed = slots[i * W] === PASSED;
          slots[i * W] = 0;
          step.done();
          if (passed && !ok) value = step.rejection();
          break;
        }
        case StepKind.Retry: {
          if (ok && !step.retriesResult(value)) break;
          const attempt = slots[i * W]!;
          const t = now === NO_TIME && step.needsTime ? this.core.clock.now() : now;
          const first = slots[i * W + 1]!;
          const elapsed = t === NO_TIME || first === NO_TIME ? 0 : t - first;
          const delay = step.decide(
            attempt,
            !ok,
            value,
            this.d.lastDelay,
            elapsed,
            this.d.cutAt <= i,
          );
          if (delay === NO_RETRY) break;
          slots[i * W] = attempt + 1;
          this.d.lastDelay = delay;
          return this.sleep(i, delay);
        }
        case StepKind.Fallback: {
          if (!step.applies(!ok, value)) break;
          let replacement: unknown;
          try {
            replacement = step.produce(!ok, value);
          } catch (error) {
            ok = false;
            value = error;
            break;
          }
          if (isThenable(replacement)) {
            const at = i - 1;
            return Promise.resolve(
              replacement.then(
                (v) => this.finishOrChain(this.unwind(at, true, v, this.time())),
                (e) => this.finishOrChain(this.unwind(at, false, e, this.time())),
              ),
            );
          }
          ok = true;
          value = replacement;
          break;
        }
      }
    }
    this.ok = ok;
    this.value = value;
    return SYNC;
  }

  // ---- waiting: retry delays and bulkhead queues ---------------------------------------------

  private sleep(step: number, delay: number): Next {
    if (!this.d.callerAborted) {
      // The next attempt gets a fresh signal if an inner timeout aborted the last one.
      this.d.abortReason = undefined;
      this.controller = undefined;
    }
    const wait = this.startWait(step);
    const retry = this.core.steps[step] as RetryPolicy;
    retry.sleeping.add(this);
    this.d.waitTimer = this.core.clock.setTimer(() => {
      this.d.waitTimer = undefined;
      retry.sleeping.delete(this);
      this.endWait()();
    }, delay);
    return wait.then(
      () => {
        this.attempt = this.slots[step * W]!;
        return this.finishOrChain(this.enter(step + 1, this.time()));
      },
      (reason) => this.finishOrChain(this.unwind(step - 1, false, reason, this.time())),
    );
  }

  private waitInQueue(bulkhead: Bulkhead, step: number, now: number): Next {
    this.slots[step * W] = bulkhead.enqueue(this, step, now);
    return this.startWait(step).then(
      () => {
        const t = this.time();
        this.slots[step * W] = 0;
        this.slots[step * W + 1] = t;
        return this.finishOrChain(this.enter(step + 1, t));
      },
      (reason) => this.finishOrChain(this.unwind(step - 1, false, reason, this.time())),
    );
  }

  private startWait(step: number): Promise<void> {
    this.d.waitStep = step;
    capturing = this.d;
    const wait = new Promise<void>(captureWait);
    capturing = undefined;
    return wait;
  }

  /** Ends the current wait; returns its resolve function (reject is `waitReject`). */
  private endWait(): () => void {
    const resolve = this.d.waitResolve!;
    this.d.waitStep = -1;
    return resolve;
  }

  private cancelWait(reason: unknown): void {
    const step = this.d.waitStep;
    const s = this.core.steps[step]!;
    if (s.stepKind === StepKind.Gate) {
      this.slots[step * W] = 0;
      (s as Bulkhead).leave();
    } else if (this.d.waitTimer !== undefined) {
      this.core.clock.clearTimer(this.d.waitTimer);
      this.d.waitTimer = undefined;
      (s as RetryPolicy).sleeping.delete(this);
    }
    this.d.waitStep = -1;
    this.d.waitReject!(reason);
  }

  /** @internal The policy it waits on was disposed: stop waiting and fail with `reason`. */
  abortWait(reason: unknown): void {
    if (this.d.waitStep >= 0) this.cancelWait(reason);
  }

  /** @internal */
  queueLive(step: number, stamp: number): boolean {
    return this.d.waitStep === step && this.slots[step * W] === stamp;
  }

  /** @internal */
  queueAdmitted(step: number): void {
    if (this.d.waitStep === step) this.endWait()();
  }

  /** @internal */
  queueRejected(step: number, error: Error): void {
    if (this.d.waitStep !== step) return;
    this.slots[step * W] = 0;
    this.d.waitStep = -1;
    this.d.waitReject!(error);
  }

  // ---- deadlines and cancellation ------------------------------------------------------------

  /** @internal */
  deadlineLive(step: number, stamp: number): boolean {
    return !this.done && this.slots[step * W] === stamp;
  }

  /** @internal */
  deadlinePassed(step: number, policy: TimeoutPolicy): void {
    this.slots[step * W] = PASSED;
    if (step < this.d.cutAt) this.d.cutAt = step;
    const error = policy.rejection();
    this.abortAttempt(error);
    if (this.d.waitStep > step) this.cancelWait(error);
    else if (policy.aggressive && this.inFlight) this.abandon(step, error);
  }

  /** Called when the caller's signal aborts (the execution is its own event listener). */
  handleEvent(): void {
    if (this.done) return;
    const reason = this.callerSignal!.reason;
    this.d.callerAborted = true;
    this.d.cutAt = -1;
    this.abortAttempt(reason);
    if (this.d.waitStep >= 0) this.cancelWait(reason);
    else if (this.core.deferred && this.inFlight) this.abandon(-1, reason);
  }

  private abortAttempt(reason: unknown): void {
    this.d.abortReason = reason;
    const c = this.controller;
    if (c !== undefined && !c.signal.aborted) c.abort(reason);
  }

  /**
   * An aggressive timeout (or the caller) gives up on the attempt in flight. Its inner steps
   * keep their permits until the work really ends (`finishAbandoned`); the steps from `step`
   * outward go on now, possibly with a new attempt.
   */
  private abandon(step: number, error: unknown): void {
    (this.d.abandoned ??= []).push({ seq: this.seq, step, slots: this.slots.slice() });
    const slots = this.slots;
    // Invalidate the inner deadlines; they belong to the abandoned attempt.
    for (let j = (step + 1) * W; j < slots.length; j += W) slots[j] = 0;
    this.seq++;
    this.inFlight = false;
    if (!this.d.callerAborted) {
      this.controller = undefined;
      this.d.abortReason = undefined;
    }
    const next = step < 0 ? this.failNow(error) : this.unwind(step, false, error, this.time());
    this.finishOrChain(next);
  }

  private failNow(error: unknown): Next {
    this.ok = false;
    this.value = error;
    return SYNC;
  }

  private finishAbandoned(seq: number, ok: boolean, value: unknown): void {
    const list = this.d.abandoned!;
    const k = list.findIndex((a) => a.seq === seq);
    const record = list[k]!;
    list.splice(k, 1);
    const steps = this.core.steps;
    const now = this.endTime();
    for (let i = steps.length - 1; i > record.step; i--) {
      const step = steps[i]!;
      if (step.stepKind === StepKind.Gate) {
        const outcome = ok ? step.classifyResult(value) : step.classifyError(value);
        const since = record.slots[steps.length * W]!;
        step.release(
          record.slots[i * W]!,
          outcome,
          now === NO_TIME || since === NO_TIME ? Number.NaN : now - since,
          value,
        );
      } else if (step.stepKind === StepKind.Timeout) {
        step.done();
      }
    }
  }

  // ---- settling --------------------------------------------------------------------------------

  /**
   * In a promise handler: turns a finished step walk into the handler's return value (the
   * result, or a throw), or passes a pending one on to be adopted.
   */
  private finishOrChain(next: Next): unknown {
    if (next !== SYNC) return next;
    if (this.core.deferred) {
      this.settle();
      return undefined;
    }
    this.cleanup();
    if (this.tryMode) return this.ok ? success(this.value) : failure(this.value);
    if (this.ok) return this.value;
    throw this.value;
  }

  /** Deferred mode: settles the outer promise once. */
  private settle(): void {
    if (this.done) return;
    this.cleanup();
    if (this.tryMode) this.d.outerResolve!(this.ok ? success(this.value) : failure(this.value));
    else if (this.ok) this.d.outerResolve!(this.value);
    else this.d.outerReject!(this.value);
  }

  private cleanup(): void {
    this.done = true;
    const signal = this.callerSignal;
    if (signal !== undefined && this.core.listensToCaller)
      signal.removeEventListener('abort', this);
  }

  private time(): number {
    return this.core.needsStartTime ? this.core.clock.now() : NO_TIME;
  }

  private endTime(): number {
    return this.core.needsEndTime ? this.core.clock.now() : NO_TIME;
  }
}
