import {
  type HedgeReason,
  type HedgeTimerTarget,
  type HedgingStep,
  NO_PUSHBACK,
} from '../protocol/around.js';
import { NO_TIME } from '../protocol/step.js';
import { cancelChild } from './cancelChild.js';
import { type AttemptBounds, AttemptContext, CallDeadline } from './context.js';
import {
  type ChildOwner,
  Execution,
  F_CHILD,
  F_DONE,
  F_OK,
  type InnerRun,
  type Next,
  NO_SLOT,
  type PipelineCore,
  RACING,
  SYNC,
} from './Execution.js';
import { isThenable } from './result.js';

/**
 * @internal The context of a hedge's attempt after the first: a subclass, so the contexts of
 * every other attempt keep their smaller shape.
 */
export class HedgeAttemptContext extends AttemptContext {
  constructor(
    attempt: number,
    own: boolean,
    callerSignal: AbortSignal | undefined,
    limit: CallDeadline | undefined,
    private readonly n: number,
    bounds: AttemptBounds | undefined,
  ) {
    super(attempt, own, callerSignal, limit, bounds);
  }

  override get hedge(): number {
    return this.n;
  }
}

/** Races a pipeline keeps for reuse. */
const POOL_SIZE = 32;

/**
 * @internal The attempts of one call through a hedge. The first starts at once; each further
 * one (a hedge) starts when its delay passes with no result, or at once when an attempt fails
 * in a way the hedge handles, while the budget grants it. The first acceptable outcome settles
 * the call: the others are cancelled by a direct call (on their execution, or their context
 * when no step is inside the hedge), and the caller does
 * not wait for them, but the race stays with its attempts until each really ends (their
 * permits, the budget's extra attempts), and only then goes back to its pool.
 *
 * Attempt `n`'s timer for hedge `n + 1` is armed on the hedge's one queue right after attempt
 * `n` starts; a race waits on at most one entry at a time.
 */
export class HedgeRace implements HedgeTimerTarget, AttemptBounds, InnerRun, ChildOwner {
  /** The hedge's index in the outer pipeline. */
  private step = 0;
  /** The outcome, when the race settled while it began. */
  private ok = false;
  private value: unknown = undefined;
  private outer: Execution | undefined = undefined;
  private policy: HedgingStep | undefined = undefined;
  private core: PipelineCore | undefined = undefined;
  private fn: ((context: AttemptContext) => unknown) | undefined = undefined;
  private readonly attempts: (Execution | undefined)[] = [];
  /**
   * No step inside the hedge: each attempt is a call of the function with its own context,
   * whose end comes to handlers of the race made once per attempt number, without an
   * execution record.
   */
  private direct = false;
  private readonly contexts: (AttemptContext | undefined)[] = [];
  private readonly onOk: ((value: unknown) => void)[] = [];
  private readonly onErr: ((error: unknown) => void)[] = [];
  /** Bit n: the race gave up on direct attempt n. */
  private cancelled = 0;
  /** When each attempt started, for hedges that time them. */
  private times: number[] | undefined = undefined;
  private started = 0;
  private running = 0;
  private maxHedges = 0;
  private attempt = 1;
  /** The timer entry the race waits on, or 0. */
  private stamp = 0;
  private settled = true;
  /** True while `begin` runs: an outcome then waits in `ok`/`value` for the outer execution. */
  private beginning = false;
  /** True while `finish` cancels the attempts. */
  private ending = false;
  /** The timer the race waits on is a server pushback's wait, not a delay. */
  private pushedBack = false;
  /** The failure whose pushback the race waits out, the call's outcome if no hedge follows. */
  private pushedValue: unknown = undefined;
  private pushedOk = false;

  constructor(private readonly pool: HedgeRace[]) {}

  /**
   * `outer`'s call reached hedge `step`: starts the first attempt (and any that start at once)
   * and returns what the outer step walk returns. No promise is made for the wait: the call's
   * promise is deferred, and the race settles it through the outer execution, which goes on
   * outward from the step before the hedge with the race's outcome.
   */
  begin(outer: Execution, step: number, policy: HedgingStep, now: number): Next {
    const core = outer.core;
    if (core.startedSlot !== NO_SLOT) outer.set(core.startedSlot, outer.attemptStart(now));
    outer.race = this;
    this.outer = outer;
    this.step = step;
    this.policy = policy;
    this.core = core.inner!;
    this.fn = outer.fn;
    this.attempt = outer.attempt;
    this.started = 0;
    this.running = 0;
    this.stamp = 0;
    this.settled = false;
    this.pushedBack = false;
    this.cancelled = 0;
    this.direct = this.core.steps.length === 0;
    this.maxHedges = policy.maxHedges;
    this.times = policy.timesAttempts ? (this.times ?? []) : undefined;
    policy.callStarted();
    this.beginning = true;
    this.launch(0);
    this.beginning = false;
    if (!this.settled) return RACING;
    // The race settled before any attempt waited (a synchronous function).
    outer.race = undefined;
    const ok = this.ok;
    const value = this.value;
    this.value = undefined;
    this.recycleIfDone();
    return outer.unwind(step - 1, ok, value, outer.endTime());
  }

  /** Starts attempt `n` unless the race settled, it was started, or the budget refuses it. */
  private tryStart(n: number, reason: HedgeReason): boolean {
    if (this.settled || n !== this.started || n > this.maxHedges) return false;
    if (!this.policy!.tryHedge(n, reason)) return false;
    this.launch(n);
    return true;
  }

  private launch(n: number): void {
    const policy = this.policy!;
    if (this.stamp !== 0) {
      policy.unschedule(this.stamp);
      this.stamp = 0;
    }
    this.started = n + 1;
    this.running++;
    const now = this.times === undefined ? Number.NaN : policy.now();
    if (this.times !== undefined) this.times[n] = now;
    if (this.direct) this.call(n);
    else this.runChild(n);
    // The attempt may have ended already, and started the next one. Its timer comes after it,
    // so an answer due when the delay ends is heard first.
    if (this.settled || this.started !== n + 1 || n >= this.maxHedges) return;
    const next = policy.delayBefore(n + 1, this.attempt, now);
    if (next > 0) this.stamp = policy.schedule(this, next);
    else if (next === 0) this.tryStart(n + 1, 'delay');
  }

  /**
   * Runs attempt `n` as an execution of the inner pipeline (a pooled record) that reports its
   * end to this race ({@link childEnded}), perhaps before this returns.
   */
  private runChild(n: number): void {
    const core = this.core!;
    const exec = Execution.obtain(core, this.fn!, undefined, false);
    exec.flags = F_CHILD;
    exec.parent = this;
    exec.hedge = n;
    exec.attempt = this.attempt;
    // The call's deadline and criticality hold inside the hedge too (its timer stays outside).
    const outer = this.outer!;
    exec.deadline = outer.deadline;
    exec.retryBound = timeLimit(outer);
    exec.bound = outer.bound;
    exec.callDeadline = outer.callDeadline;
    exec.level = outer.level;
    // A coalescing step inside shares by the call's key.
    if (core.takesKey) {
      const key = outer.detour?.key;
      if (key !== undefined) exec.d.key = key;
    }
    this.attempts[n] = exec;
    if (core.deferred) exec.defer();
    if (exec.enter(0, core.needsStartTime ? core.clock.now() : NO_TIME) === SYNC) {
      this.childEnded(exec);
    }
  }

  /** @internal A child attempt ended: its record goes back to its pool, then the race goes on. */
  childEnded(exec: Execution): void {
    exec.flags |= F_DONE;
    const n = exec.hedge;
    const ok = (exec.flags & F_OK) !== 0;
    const value = exec.value;
    const d = exec.detour;
    exec.parent = undefined;
    // A record with an abandoned attempt (an aggressive timeout inside) still hears from it.
    if (d?.abandoned === undefined || d.abandoned.length === 0) exec.recycle();
    this.ended(n, ok, value, d?.callerAborted === true);
  }

  /** Runs direct attempt `n`: the function, with a signal of its own. */
  private call(n: number): void {
    const outer = this.outer!;
    const bounds = outer.core.timeoutsBound ? this : undefined;
    const context =
      n === 0
        ? new AttemptContext(this.attempt, true, undefined, outer.callDeadline, bounds)
        : new HedgeAttemptContext(this.attempt, true, undefined, outer.callDeadline, n, bounds);
    this.contexts[n] = context;
    let result: unknown;
    let thenable: boolean;
    try {
      result = this.fn!(context);
      thenable = isThenable(result);
    } catch (error) {
      this.directEnded(n, false, error);
      return;
    }
    if (!thenable) {
      this.directEnded(n, true, result);
      return;
    }
    let ok = this.onOk[n];
    let err = this.onErr[n];
    if (ok === undefined || err === undefined) {
      ok = this.onOk[n] = (value) => this.directEnded(n, true, value);
      err = this.onErr[n] = (error) => this.directEnded(n, false, error);
    }
    Promise.resolve(result).then(ok, err);
  }

  private directEnded(n: number, ok: boolean, value: unknown): void {
    this.contexts[n] = undefined;
    this.ended(n, ok, value, (this.cancelled & (1 << n)) !== 0);
  }

  /** @internal The context of attempt `n` (a hedge) of a child execution. */
  contextOf(
    attempt: number,
    n: number,
    limit: CallDeadline | undefined,
    bounds: AttemptBounds,
  ): AttemptContext {
    return new HedgeAttemptContext(attempt, true, undefined, limit, n, bounds);
  }

  /** @internal For an attempt this race runs itself (no steps inside the hedge). */
  limitOf(context: AttemptContext): CallDeadline | undefined {
    if (this.settled || this.contexts[context.hedge] !== context) return undefined;
    const clock = this.outer!.core.clock;
    const at = this.outerBound(clock.now());
    const own = this.outer!.callDeadline;
    if (at === Number.POSITIVE_INFINITY) return undefined;
    return own !== undefined && own.at === at ? own : new CallDeadline(at, clock);
  }

  /** @internal The deadline bounding the call around the hedge (see `Execution.timeoutBound`). */
  outerBound(now: number): number {
    return this.outer === undefined ? Number.POSITIVE_INFINITY : this.outer.timeoutBound(now);
  }

  /** @internal */
  hedgeLive(stamp: number): boolean {
    return !this.settled && this.stamp === stamp;
  }

  /** @internal */
  hedgeDue(stamp: number): void {
    if (this.stamp !== stamp) return;
    this.stamp = 0;
    if (!this.pushedBack) {
      this.tryStart(this.started, 'delay');
      return;
    }
    this.pushedBack = false;
    const ok = this.pushedOk;
    const value = this.pushedValue;
    this.pushedValue = undefined;
    // With no attempt in flight, a hedge the budget refuses leaves nothing to wait for.
    if (!this.tryStart(this.started, 'pushback') && this.running === 0) {
      this.finish(this.started - 1, ok, value, this.policy!.lostReason());
    }
  }

  /**
   * After a failure the hedge handles: starts the next hedge at once, or arms the wait its
   * server pushback asks for, or (a pushback past the deadline, or "do not retry") starts no
   * more. False when nothing is left to wait for: the race ends with this failure.
   */
  private afterFailure(ok: boolean, value: unknown): boolean {
    if (this.started > this.maxHedges) return this.running !== 0;
    const policy = this.policy!;
    const wait = policy.pushback(!ok, value);
    if (wait === NO_PUSHBACK) return this.tryStart(this.started, 'failure') || this.running !== 0;
    if (this.stamp !== 0) {
      policy.unschedule(this.stamp);
      this.stamp = 0;
    }
    this.pushedBack = false;
    this.pushedValue = undefined;
    if (wait >= timeLimit(this.outer!) - policy.now()) {
      this.maxHedges = this.started - 1;
      return this.running !== 0;
    }
    this.pushedBack = true;
    this.pushedOk = ok;
    this.pushedValue = value;
    this.stamp = policy.scheduleAfter(this, wait);
    return true;
  }

  /** @internal Attempt `n` ended; `cancelled` when the race had given up on it. */
  ended(n: number, ok: boolean, value: unknown, cancelled: boolean): void {
    this.attempts[n] = undefined;
    this.running--;
    const policy = this.policy!;
    if (n > 0) policy.extraEnded(n);
    let failed = false;
    if (!cancelled) {
      failed = policy.isHandledFailure(!ok, value);
      // Only accepted results tell the latency of the dependency (a refusal takes no time).
      const timed = this.times !== undefined && ok && !failed;
      policy.attemptEnded(n, !failed, timed ? this.times![n]! : Number.NaN);
    }
    if (this.settled) {
      this.recycleIfDone();
      return;
    }
    // An accepted result, or a failure the hedge does not handle, ends the race; a handled one
    // starts the next hedge (at once, or after its pushback), and the last one to fail gives
    // the call its outcome.
    if (!failed || !this.afterFailure(ok, value)) {
      this.finish(n, ok, value, policy.lostReason());
    }
  }

  /**
   * @internal A deadline or the caller's signal ends the call during the race: every attempt
   * is given up, and the call fails with `reason` at once.
   */
  cancel(reason: unknown): void {
    const outer = this.outer!;
    outer.race = undefined;
    this.outer = undefined;
    const step = this.step;
    this.finish(-1, false, reason, reason);
    // From inside the first attempt (its function aborted the caller's signal): `begin` goes
    // on outward with the outcome.
    if (this.beginning) return;
    goOn(outer, step, false, reason);
  }

  /** Settles the race with attempt `winner`'s outcome; the others' signals abort with `reason`. */
  private finish(winner: number, ok: boolean, value: unknown, reason: unknown): void {
    this.settled = true;
    this.pushedValue = undefined;
    const policy = this.policy!;
    if (this.stamp !== 0) {
      policy.unschedule(this.stamp);
      this.stamp = 0;
    }
    // Cancelling a child may end it at once (a hedge inside it): the race stays out of its
    // pool until the loop is done.
    this.ending = true;
    for (let i = 0; i < this.started; i++) {
      if (this.direct) {
        const context = this.contexts[i];
        if (context === undefined) continue;
        this.cancelled |= 1 << i;
        context.abort(reason);
      } else {
        const exec = this.attempts[i];
        if (exec !== undefined) cancelChild(exec, reason);
      }
    }
    this.ending = false;
    policy.callEnded(winner);
    const outer = this.outer;
    this.outer = undefined;
    if (this.beginning) {
      this.ok = ok;
      this.value = value;
      return;
    }
    const step = this.step;
    this.recycleIfDone();
    if (outer !== undefined) goOn(outer, step, ok, value);
  }

  private recycleIfDone(): void {
    if (!this.settled || this.running !== 0 || this.beginning || this.ending) return;
    if (this.fn === undefined) return;
    this.fn = undefined;
    if (this.pool.length < POOL_SIZE) this.pool.push(this);
  }
}

/** The race of `outer`'s hedge at `step` settled: the call goes on outward with its outcome. */
function goOn(outer: Execution, step: number, ok: boolean, value: unknown): void {
  outer.race = undefined;
  outer.finishOrChain(outer.unwind(step - 1, ok, value, outer.endTime()));
}

/** The time on the clock by which `exec`'s call must end: Infinity when unbounded. */
function timeLimit(exec: Execution): number {
  return Math.min(exec.deadline, exec.retryBound);
}
