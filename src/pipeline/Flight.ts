import { NO_TIME } from '../protocol/step.js';
import { cancelChild } from './cancelChild.js';
import { type AttemptBounds, AttemptContext, type CallDeadline } from './context.js';
import {
  type ChildOwner,
  Execution,
  F_CHILD,
  F_DONE,
  F_OK,
  type InnerRun,
  type Next,
  NO_SLOT,
  RACING,
  SYNC,
} from './Execution.js';

/** @internal What a flight tells the coalescing step that made it. */
export interface FlightHost {
  /**
   * The flight settled, or every caller left it (`abandoned`, the last with `reason`): its key
   * must go at once.
   */
  flightOver(flight: Flight, abandoned: boolean, reason?: unknown): void;
  /**
   * The value caller `exec` is given of a shared success (once per caller); throws to fail
   * that caller alone.
   */
  shareValue(value: unknown): unknown;
}

/**
 * @internal One run of the steps inside a coalescing step, shared by the calls with its key
 * that arrive while it is in flight: the first caller starts it (a child execution of the
 * inner pipeline, with the first caller's function and a signal of its own); later ones join.
 * A caller whose deadline passes or whose signal aborts leaves at once, with its own reason;
 * when the last one leaves, the child's signal aborts and the key is dropped at once, so the
 * next caller starts a fresh flight rather than join a doomed one. When the child ends, the key
 * is dropped first, then every caller still there goes on outward with the outcome (a success's
 * value through the host's `shareValue`, once per caller). Nothing is kept after.
 */
export class Flight implements InnerRun, ChildOwner {
  /**
   * The first caller, while it waits, and the index of the coalescing step in its pipeline: a
   * flight of one caller (the common case, no contention) makes no map.
   */
  private first: Execution | undefined = undefined;
  private firstStep = 0;
  /** The other callers waiting, with the index of the step in each one's pipeline. */
  private others: Map<Execution, number> | undefined = undefined;
  private child: Execution | undefined = undefined;
  /** No caller will hear from it any more: it settled, or every caller left. */
  private over = false;
  /** The caller whose call is starting the child, while `enter` runs. */
  private starter: Execution | undefined = undefined;
  /** Set when the child ended, or the starter left, while it started: `start` answers it. */
  private early = false;
  private earlyOk = false;
  private earlyValue: unknown = undefined;

  constructor(
    private readonly host: FlightHost,
    /** The key it is kept under, or undefined for a call without one (run alone). */
    readonly key: string | undefined,
  ) {}

  /** Callers waiting now. */
  get size(): number {
    return (this.first === undefined ? 0 : 1) + (this.others?.size ?? 0);
  }

  /**
   * `exec`'s call, at step `step` of its pipeline, starts the flight: runs the steps inside the
   * step as a child execution that reports to this flight. Returns what the step walk returns.
   */
  start(exec: Execution, step: number, now: number): Next {
    this.add(exec, step, now);
    const core = exec.core.inner!;
    const child = Execution.obtain(core, exec.fn!, undefined, false);
    child.flags = F_CHILD;
    child.parent = this;
    // The first caller's criticality holds inside; deadlines are each caller's own.
    child.level = exec.level;
    child.attempt = exec.attempt;
    if (core.takesKey && this.key !== undefined) child.d.key = this.key;
    this.child = child;
    this.starter = exec;
    if (core.deferred) child.defer();
    if (child.enter(0, core.needsStartTime ? core.clock.now() : NO_TIME) === SYNC) {
      this.childEnded(child);
    }
    this.starter = undefined;
    if (!this.early) return RACING;
    // The child ended, or the starter left, before anything waited.
    const ok = this.earlyOk;
    const value = this.earlyValue;
    this.earlyValue = undefined;
    exec.race = undefined;
    return exec.unwind(step - 1, ok, value, exec.endTime());
  }

  /** `exec`'s call, at step `step` of its pipeline, joins the flight in progress. */
  join(exec: Execution, step: number, now: number): Next {
    this.add(exec, step, now);
    return RACING;
  }

  private add(exec: Execution, step: number, now: number): void {
    const core = exec.core;
    // Each caller's gates outside time its own call.
    if (core.startedSlot !== NO_SLOT) exec.set(core.startedSlot, exec.attemptStart(now));
    exec.race = this;
    if (this.first === undefined && this.others === undefined) {
      this.first = exec;
      this.firstStep = step;
    } else {
      (this.others ??= new Map()).set(exec, step);
    }
  }

  /**
   * @internal Caller `exec` leaves (its deadline passed, its signal aborted): its call fails
   * with `reason` at once. The last to leave takes the flight down with it.
   */
  cancel(reason: unknown, exec: Execution): void {
    let step: number | undefined;
    if (exec === this.first) {
      step = this.firstStep;
      this.first = undefined;
    } else {
      step = this.others?.get(exec);
      if (step === undefined) return;
      this.others!.delete(exec);
    }
    exec.race = undefined;
    if (this.size === 0) this.abandon(reason);
    if (exec === this.starter) {
      this.settleEarly(false, reason);
      return;
    }
    exec.finishOrChain(exec.unwind(step - 1, false, reason, exec.endTime()));
  }

  /** Every caller left: the key goes at once, and the child is given up on with `reason`. */
  private abandon(reason: unknown): void {
    this.over = true;
    this.host.flightOver(this, true, reason);
    const child = this.child;
    if (child !== undefined) cancelChild(child, reason);
  }

  /** @internal The child ended: its record goes back to its pool, then the callers go on. */
  childEnded(exec: Execution): void {
    exec.flags |= F_DONE;
    const ok = (exec.flags & F_OK) !== 0;
    const value = exec.value;
    const d = exec.detour;
    exec.parent = undefined;
    this.child = undefined;
    // A record with an abandoned attempt (an aggressive timeout inside) still hears from it.
    if (d?.abandoned === undefined || d.abandoned.length === 0) exec.recycle();
    if (this.over) return;
    this.over = true;
    // Dropped before any caller goes on: one that calls again starts a new flight.
    this.host.flightOver(this, false);
    const first = this.first;
    const others = this.others;
    this.first = undefined;
    this.others = undefined;
    if (first !== undefined) this.goOn(first, this.firstStep, ok, value);
    if (others !== undefined) {
      for (const [caller, step] of others) this.goOn(caller, step, ok, value);
    }
  }

  /** Caller `exec` goes on outward from the step before `step` with the flight's outcome. */
  private goOn(exec: Execution, step: number, ok: boolean, value: unknown): void {
    exec.race = undefined;
    if (ok) {
      try {
        value = this.host.shareValue(value);
      } catch (error) {
        ok = false;
        value = error;
      }
    }
    if (exec === this.starter) this.settleEarly(ok, value);
    else exec.finishOrChain(exec.unwind(step - 1, ok, value, exec.endTime()));
  }

  /** The starter's outcome came while it started: `start` goes on outward with it. */
  private settleEarly(ok: boolean, value: unknown): void {
    this.early = true;
    this.earlyOk = ok;
    this.earlyValue = value;
  }

  /** @internal No caller's deadline bounds a flight that others share. */
  outerBound(): number {
    return Number.POSITIVE_INFINITY;
  }

  /** @internal A flight's child is no hedge's attempt: never asked. */
  contextOf(
    attempt: number,
    _n: number,
    limit: CallDeadline | undefined,
    bounds: AttemptBounds,
  ): AttemptContext {
    return new AttemptContext(attempt, true, undefined, limit, bounds);
  }
}
