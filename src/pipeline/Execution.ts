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
  /** Some step needs the time: one reading per edge is shared by all of them. */
  readonly needsTime: boolean;
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

/** Slots per step in `slots`: a token or stamp, a time, and one spare (a retry's last delay). */
const W = 3;
/** A timeout slot holding this has seen its deadline pass. */
const PASSED = -2;

/** An attempt abandoned by an aggressive timeout, still holding permits of the inner steps. */
interface Abandoned {
  readonly seq: number;
  readonly step: number;
  readonly slots: number[];
}

let capturing: Execution | undefined;
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
  waitResolve: (() => void) | undefined = undefined;
  waitReject: ((reason: unknown) => void) | undefined = undefined;
  outerResolve: ((value: unknown) => void) | undefined = undefined;
  outerReject: ((reason: unknown) => void) | undefined = undefined;

  private readonly slots: number[];
  private controller: AbortController | undefined = undefined;
  private abortReason: unknown = undefined;
  private callerAborted = false;
  /** Index of the outermost step whose deadline passed (or -1 after a caller abort). */
  private cutAt = Number.POSITIVE_INFINITY;
  private waitStep = -1;
  private waitTimer: TimerHandle | undefined = undefined;
  private inFlight = false;
  private seq = 0;
  private abandoned: Abandoned[] | undefined = undefined;
  private done = false;

  constructor(
    private readonly core: PipelineCore,
    private readonly fn: (context: ExecutionContext) => unknown,
    private readonly callerSignal: AbortSignal | undefined,
    private readonly tryMode: boolean,
  ) {
    this.slots = new Array(core.steps.length * W);
  }

  get signal(): AbortSignal {
    let c = this.controller;
    if (c === undefined) {
      if (!this.core.ownSignal) return this.callerSignal ?? neverAbortedSignal();
      c = new AbortController();
      this.controller = c;
      if (this.abortReason !== undefined) c.abort(this.abortReason);
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
      capturing = this;
      outer = new Promise(captureOuter);
      capturing = undefined;
    }
    const next = this.enter(0, core.needsTime ? core.clock.now() : NO_TIME);
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
            slots[i * W + 1] = now;
            break;
          }
          if (token === WAIT) return this.waitInQueue(step as Bulkhead, i, now);
          return this.unwind(i - 1, false, step.rejection(), now);
        }
        case StepKind.Retry:
          slots[i * W] = 1;
          slots[i * W + 1] = now;
          slots[i * W + 2] = 0;
          this.attempt = 1;
          break;
        case StepKind.Timeout:
          slots[i * W] = step.register(this, i, now);
          break;
      }
    }
    return this.call();
  }

  private call(): Next {
    const core = this.core;
    let result: unknown;
    try {
      result = this.fn(this);
    } catch (error) {
      return this.unwind(
        core.steps.length - 1,
        false,
        error,
        core.needsTime ? core.clock.now() : NO_TIME,
      );
    }
    if (isThenable(result)) {
      this.inFlight = true;
      const seq = this.seq;
      return Promise.resolve(
        result.then(
          (value) => this.resume(seq, true, value),
          (error) => this.resume(seq, false, error),
        ),
      );
    }
    return this.unwind(
      core.steps.length - 1,
      true,
      result,
      core.needsTime ? core.clock.now() : NO_TIME,
    );
  }

  private resume(seq: number, ok: boolean, value: unknown): unknown {
    if (seq !== this.seq) {
      this.finishAbandoned(seq, ok, value);
      return undefined;
    }
    this.inFlight = false;
    const core = this.core;
    return this.finishOrChain(
      this.unwind(core.steps.length - 1, ok, value, core.needsTime ? core.clock.now() : NO_TIME),
    );
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
            !ok && this.callerAborted && value === this.callerSignal!.reason
              ? Outcome.Ignored
              : ok
                ? step.classifyResult(value)
                : step.classifyError(value);
          const since = slots[i * W + 1]!;
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
          const started = slots[i * W + 1]!;
          const delay = step.decide(
            attempt,
            !ok,
            value,
            slots[i * W + 2]!,
            now === NO_TIME ? 0 : now - started,
            this.cutAt <= i,
          );
          if (delay === NO_RETRY) break;
          slots[i * W] = attempt + 1;
          slots[i * W + 2] = delay;
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
    if (!this.callerAborted) {
      // The next attempt gets a fresh signal if an inner timeout aborted the last one.
      this.abortReason = undefined;
      this.controller = undefined;
    }
    const wait = this.startWait(step);
    this.waitTimer = this.core.clock.setTimer(() => {
      this.waitTimer = undefined;
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
    this.waitStep = step;
    capturing = this;
    const wait = new Promise<void>(captureWait);
    capturing = undefined;
    return wait;
  }

  /** Ends the current wait; returns its resolve function (reject is `waitReject`). */
  private endWait(): () => void {
    const resolve = this.waitResolve!;
    this.waitStep = -1;
    return resolve;
  }

  private cancelWait(reason: unknown): void {
    const step = this.waitStep;
    const s = this.core.steps[step]!;
    if (s.stepKind === StepKind.Gate) {
      this.slots[step * W] = 0;
      (s as Bulkhead).leave();
    } else if (this.waitTimer !== undefined) {
      this.core.clock.clearTimer(this.waitTimer);
      this.waitTimer = undefined;
    }
    this.waitStep = -1;
    this.waitReject!(reason);
  }

  /** @internal */
  queueLive(step: number, stamp: number): boolean {
    return this.waitStep === step && this.slots[step * W] === stamp;
  }

  /** @internal */
  queueAdmitted(step: number): void {
    if (this.waitStep === step) this.endWait()();
  }

  /** @internal */
  queueRejected(step: number, error: Error): void {
    if (this.waitStep !== step) return;
    this.slots[step * W] = 0;
    this.waitStep = -1;
    this.waitReject!(error);
  }

  // ---- deadlines and cancellation ------------------------------------------------------------

  /** @internal */
  deadlineLive(step: number, stamp: number): boolean {
    return !this.done && this.slots[step * W] === stamp;
  }

  /** @internal */
  deadlinePassed(step: number, policy: TimeoutPolicy): void {
    this.slots[step * W] = PASSED;
    if (step < this.cutAt) this.cutAt = step;
    const error = policy.rejection();
    this.abortAttempt(error);
    if (this.waitStep > step) this.cancelWait(error);
    else if (policy.aggressive && this.inFlight) this.abandon(step, error);
  }

  /** Called when the caller's signal aborts (the execution is its own event listener). */
  handleEvent(): void {
    if (this.done) return;
    const reason = this.callerSignal!.reason;
    this.callerAborted = true;
    this.cutAt = -1;
    this.abortAttempt(reason);
    if (this.waitStep >= 0) this.cancelWait(reason);
    else if (this.core.deferred && this.inFlight) this.abandon(-1, reason);
  }

  private abortAttempt(reason: unknown): void {
    this.abortReason = reason;
    const c = this.controller;
    if (c !== undefined && !c.signal.aborted) c.abort(reason);
  }

  /**
   * An aggressive timeout (or the caller) gives up on the attempt in flight. Its inner steps
   * keep their permits until the work really ends (`finishAbandoned`); the steps from `step`
   * outward go on now, possibly with a new attempt.
   */
  private abandon(step: number, error: unknown): void {
    (this.abandoned ??= []).push({ seq: this.seq, step, slots: this.slots.slice() });
    const slots = this.slots;
    // Invalidate the inner deadlines; they belong to the abandoned attempt.
    for (let j = (step + 1) * W; j < slots.length; j += W) slots[j] = 0;
    this.seq++;
    this.inFlight = false;
    if (!this.callerAborted) {
      this.controller = undefined;
      this.abortReason = undefined;
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
    const list = this.abandoned!;
    const k = list.findIndex((a) => a.seq === seq);
    const record = list[k]!;
    list.splice(k, 1);
    const steps = this.core.steps;
    const now = this.time();
    for (let i = steps.length - 1; i > record.step; i--) {
      const step = steps[i]!;
      if (step.stepKind === StepKind.Gate) {
        const outcome = ok ? step.classifyResult(value) : step.classifyError(value);
        const since = record.slots[i * W + 1]!;
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
    if (this.tryMode) this.outerResolve!(this.ok ? success(this.value) : failure(this.value));
    else if (this.ok) this.outerResolve!(this.value);
    else this.outerReject!(this.value);
  }

  private cleanup(): void {
    this.done = true;
    const signal = this.callerSignal;
    if (signal !== undefined && this.core.listensToCaller)
      signal.removeEventListener('abort', this);
  }

  private time(): number {
    return this.core.needsTime ? this.core.clock.now() : NO_TIME;
  }
}
