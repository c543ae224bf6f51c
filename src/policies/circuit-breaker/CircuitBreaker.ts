import { ask, type Disposer } from '../../events/Listeners.js';
import { brand } from '../../protocol/brand.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import {
  type Gate,
  NEEDS_NOTHING,
  NO_TIME,
  Outcome,
  REJECTED,
  type StepNeeds,
} from '../../protocol/step.js';
import { rejectedChannel } from '../../telemetry/channels.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import type { LatencyHistogram } from '../../telemetry/LatencyHistogram.js';
import { onlyArguments } from '../../validation/validate.js';
import { isCountedError } from '../shared/classify.js';
import { buildFromResolved, presetLatency, presetName, takePreset } from '../shared/preset.js';
import { withIdentity } from '../shared/reconfigure.js';
import { announce, announceChange, announceRejection } from './announce.js';
import { awaitBreakEnd, wakeAtBreakEnd } from './breakEnd.js';
import { BrokenCircuitError, circuitBreakerCodes, IsolatedCircuitError } from './errors.js';
import type { StateChangeEvent, TransitionReason } from './events.js';
import { BreakerFields } from './fields.js';
import * as manual from './manual.js';
import {
  type CircuitBreakerOptions,
  type ResolvedBreakerOptions,
  resolveBreakerOptions,
} from './options.js';
import { enterHalfOpen, releaseProbe } from './probes.js';
import { applyBreakerOptions, checkBreakerOptions } from './reconfigure.js';
import { type CircuitBreakerSnapshot, restoreSnapshot, snapshotOf } from './snapshot.js';
import {
  type CircuitState,
  NOT_QUIET,
  S_CLOSED,
  S_DISABLED,
  S_FORCED_OPEN,
  S_HALF_OPEN,
  S_METRICS_ONLY,
  S_OPEN,
  STATE_NAMES,
} from './state.js';
import { type CircuitBreakerStats, statsOf } from './stats.js';

const NEEDS_UNTIMED: StepNeeds = Object.freeze({ ...NEEDS_NOTHING, callSlot: true });
const NEEDS_TIMED: StepNeeds = Object.freeze({ ...NEEDS_UNTIMED, startTime: true, endTime: true });

/** @internal Receives every state change of a breaker, without counting as a listener. */
export type TransitionSink = (breaker: CircuitBreaker, event: StateChangeEvent) => void;

/**
 * A circuit breaker: stops calling a dependency that keeps failing, then lets a few probe calls
 * test whether it has recovered. Put it in a pipeline (alone or with other policies); one
 * breaker may guard several pipelines.
 *
 * Transitions out of open and half-open are computed from the clock when the breaker is next
 * used or read, so an idle breaker holds no timer. A breaker left unused after its break waits
 * half-open for its next call, which is admitted as a probe: however long it sat idle, its next
 * use reports one transition (open to half-open). Every admission carries the breaker's
 * generation; a call admitted before a transition (or a `reset()`) never moves the state after
 * it.
 *
 * @example
 * ```ts
 * const breaker = new CircuitBreaker({
 *   window: { kind: 'count', size: 20, minimumCalls: 10 },
 *   failureRateThreshold: 0.5,
 *   breakDuration: 10_000,
 * });
 * const user = await pipeline(breaker).execute(({ signal }) => fetch(url, { signal }));
 * ```
 */
export class CircuitBreaker<T = unknown> extends BreakerFields implements Gate {
  /** Type only: the result type `handleResult` judges, read by `pipeline(...)`. */
  declare readonly [RESULT_TYPE]?: T;

  constructor(options?: CircuitBreakerOptions<T>) {
    onlyArguments(arguments, 1, 'new CircuitBreaker()');
    const preset = takePreset<ResolvedBreakerOptions>();
    const sharedLatency = preset === undefined ? undefined : presetLatency();
    const o = preset ?? resolveBreakerOptions(options);
    super(o, preset === undefined ? o.name : presetName(), sharedLatency);
    if (o.initialState !== undefined) restoreSnapshot(this, o.initialState);
    this.refreshQuiet();
    if (options?.name !== undefined) noteCodeBuilt('circuitBreaker', this.name, this);
  }

  // ---- reconfiguration ------------------------------------------------------------------------

  /**
   * Applies new options to the calls to come, keeping the state, the generation, the backoff
   * and (when the window keeps its kind and size, or duration and buckets) the outcomes in the
   * window; a window of another shape starts empty. An open breaker keeps the end of its
   * current break; the new `breakDuration` applies from the next opening.
   *
   * `options` replace the current ones as a whole, as for the constructor: an option left out
   * takes its default. `name` and `clock` may be left out (they are kept) but not changed, and
   * `initialState` is not accepted. Slow-call tracking cannot be turned on for a breaker built
   * without it (pipelines built with the breaker do not time calls); turning it off is fine.
   *
   * Throws {@link OptionsError} and changes nothing when an option is invalid.
   */
  reconfigure(options?: CircuitBreakerOptions<T>): void {
    const o = resolveBreakerOptions(withIdentity(options, this.name, this.clock));
    this.checkOptions(o);
    this.applyOptions(o);
  }

  /**
   * @internal Throws {@link OptionsError} when resolved options `o` cannot replace this
   * breaker's (another name or clock, an initial state, slow-call tracking turned on).
   */
  checkOptions(o: ResolvedBreakerOptions, name: string = o.name): void {
    checkBreakerOptions(this, o, name);
  }

  /** @internal Swaps in options that passed {@link checkOptions}. */
  applyOptions(o: ResolvedBreakerOptions): void {
    applyBreakerOptions(this, o);
  }

  /** The current state, with any transition due by now applied first. */
  get state(): CircuitState {
    if (this.s === S_OPEN || this.s === S_HALF_OPEN) this.settleTime(this.clock.now());
    return STATE_NAMES[this.s]!;
  }

  /** The generation: it grows by one on every transition and on every `reset()`. */
  get generation(): number {
    return this.gen;
  }

  /** What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return this.needsDuration ? NEEDS_TIMED : NEEDS_UNTIMED;
  }

  /** Counters since construction, plus what the window holds now. */
  stats(): CircuitBreakerStats {
    return statsOf(this);
  }

  // ---- the gate protocol ----------------------------------------------------------------------

  /** Gate protocol ({@link Gate.admit}): called by a pipeline's executor, not by users. */
  admit(now: number): number {
    // Small enough to inline into the executor; the other states are a call away.
    return this.s === S_CLOSED ? this.gen : this.admitNotClosed(now);
  }

  private admitNotClosed(now: number): number {
    const s = this.s;
    if (s === S_DISABLED || s === S_METRICS_ONLY) return this.gen;
    // Held open by hand: no clock to read, nothing to decide.
    if (s === S_FORCED_OPEN) return this.refuse();
    if (s === S_OPEN && !this.breakMayBeOver && (this.nRejections & 63) !== 63) {
      return this.refuse();
    }
    return this.acquireSlow(now === NO_TIME ? this.clock.now() : now);
  }

  private acquireSlow(now: number): number {
    if (this.s === S_OPEN || this.s === S_HALF_OPEN) this.settleTime(now);
    if (this.s === S_HALF_OPEN) {
      if (
        this.probesStarted < this.o.probes &&
        this.probesInFlight < this.o.maxConcurrentProbes &&
        this.probeGate?.mayProbe(now) !== false
      ) {
        if (this.halfOpenDeadline === Number.POSITIVE_INFINITY) {
          this.halfOpenDeadline = now + this.o.halfOpenMaxWait;
        }
        this.probesStarted++;
        this.probesInFlight++;
        return this.gen;
      }
    } else if (this.s !== S_OPEN && this.s !== S_FORCED_OPEN) {
      return this.gen;
    }
    return this.refuse();
  }

  private refuse(): number {
    const s = this.s;
    this.nRejections++;
    if (s !== S_OPEN) {
      if (s === S_FORCED_OPEN) this.nRejectedForced++;
      else this.nRejectedHalfOpen++;
    }
    if (this.rejected.size !== 0 || rejectedChannel.hasSubscribers) announceRejection(this, s);
    return REJECTED;
  }

  /** Gate protocol ({@link Gate.release}): called by a pipeline's executor, not by users. */
  release(token: number, outcome: Outcome, elapsed: number, detail?: unknown): void {
    // Kept small enough for V8 to inline into the pipeline's handlers: rare paths are methods.
    // A transition already due (a half-open max wait that passed) comes before this outcome.
    if (this.s === S_OPEN || this.s === S_HALF_OPEN) this.settleTime(this.clock.now());
    if (outcome === Outcome.Ignored) {
      this.releaseIgnored(token);
      return;
    }
    const failure = outcome === Outcome.Failure;
    const slow = elapsed >= this.o.slowCallDuration;
    if (failure) this.nFailures++;
    else this.nSuccesses++;
    // NaN (the call was not timed) fails the comparison.
    if (this.latency !== undefined && elapsed >= 0) this.latency.record(elapsed);
    const list = failure ? this.failed : this.succeeded;
    if (list.size !== 0) list.emit({ detail, elapsed, slow });
    if (token !== this.gen) return;
    const s = this.s;
    if (s === S_CLOSED || s === S_METRICS_ONLY) {
      const now = this.needsNow ? this.clock.now() : 0;
      if (this.window.record(failure, slow, now) && s === S_CLOSED) this.judgeWindow(now);
    } else if (s === S_HALF_OPEN) {
      releaseProbe(this, failure || slow);
    }
  }

  /**
   * {@link release} for an untimed call that succeeded, classifying `value`; a quiet
   * breaker's success only resets the window's run, so it skips the checks `release` makes.
   */
  releaseSuccess(token: number, value: unknown): void {
    if (token !== this.quietGen) {
      this.release(token, this.classifyResult(value), Number.NaN, value);
      return;
    }
    this.nSuccesses++;
    const now = this.needsNow ? this.clock.now() : 0;
    if (this.window.record(false, false, now)) this.judgeWindow(now);
  }

  private releaseIgnored(token: number): void {
    this.nIgnored++;
    if (token === this.gen && this.s === S_HALF_OPEN) {
      // The probe told us nothing: give its slot back.
      this.probesInFlight--;
      this.probesStarted--;
    }
  }

  private judgeWindow(now: number): void {
    const reason = this.window.judge(now);
    if (reason !== undefined) this.open(this.needsNow ? now : this.clock.now(), reason, true);
  }

  /** Gate protocol ({@link Gate.classifyError}): called by a pipeline's executor, not by users. */
  classifyError(error: unknown): Outcome {
    if (!isCountedError(error)) return Outcome.Ignored;
    // A predicate that throws counts the call as failed: the safe side for a breaker.
    return ask(this.o.handle, error, true) ? Outcome.Failure : Outcome.Success;
  }

  /** Gate protocol ({@link Gate.classifyResult}): called by a pipeline's executor, not by users. */
  classifyResult(value: unknown): Outcome {
    const h = this.o.handleResult;
    return h !== undefined && ask(h, value, true) ? Outcome.Failure : Outcome.Success;
  }

  /** The error a refused call rejects with. */
  rejection(): BrokenCircuitError {
    const pending = this.pendingError;
    if (pending !== undefined) {
      this.pendingError = undefined;
      return pending;
    }
    if (this.s === S_FORCED_OPEN) {
      if (this.o.debug) return new IsolatedCircuitError(this.name, this.clock);
      return this.isolatedError ?? this.makeIsolatedError();
    }
    if (this.s === S_HALF_OPEN) return this.halfOpenRejection();
    if (this.o.debug) return new BrokenCircuitError(this.name, this.clock, this.openUntil);
    return this.openError ?? this.makeOpenError();
  }

  /**
   * The refusal of a half-open breaker: it changes state at the latest when its probes must
   * have decided (or, before any probe of its own started, a max wait from now).
   */
  private halfOpenRejection(): BrokenCircuitError {
    const d = this.halfOpenDeadline;
    const until = d === Number.POSITIVE_INFINITY ? this.clock.now() + this.o.halfOpenMaxWait : d;
    if (this.o.debug) {
      return new BrokenCircuitError(
        this.name,
        this.clock,
        until,
        circuitBreakerCodes.CircuitOpen,
        true,
      );
    }
    const error = this.halfOpenError ?? this.makeHalfOpenError();
    error.openUntil = until;
    return error;
  }

  // ---- manual control ---------------------------------------------------------------------------

  /**
   * Holds the breaker open until every returned disposer has been called, then closes it.
   * Calls are refused with {@link IsolatedCircuitError} meanwhile.
   */
  isolate(): Disposer {
    return manual.isolate(this);
  }

  /** Refuses every call until `reset()` (or another manual transition). */
  forceOpen(): void {
    manual.forceOpen(this);
  }

  /**
   * Closes the breaker and clears its window and backoff, whatever its state, under a new
   * generation: calls admitted before the reset never count after it (a closed breaker stays
   * closed, with no transition reported).
   */
  reset(): void {
    manual.reset(this);
  }

  /** Opens the breaker now, as if its thresholds had been crossed. */
  trip(): void {
    manual.trip(this);
  }

  /**
   * Lets every call through and never opens until `reset()`: outcomes go to no window. The
   * counters of `stats()`, the latency histogram and the success and failure events go on, so
   * metrics still show the traffic.
   */
  disable(): void {
    manual.disable(this);
  }

  /** Records outcomes but never opens, until `reset()`: for trying out thresholds. */
  metricsOnly(): void {
    manual.metricsOnly(this);
  }

  // ---- export and restore -------------------------------------------------------------------------

  /** The breaker's state as plain data; pass it back as `initialState` to restore it. */
  toJSON(): CircuitBreakerSnapshot {
    const now = this.clock.now();
    this.settleTime(now);
    return snapshotOf(this.s, this.openUntil, this.backoffLevel(now), this.window, now);
  }

  // ---- transitions -------------------------------------------------------------------------------

  /** @internal */
  settleNow(): void {
    if (this.s === S_OPEN || this.s === S_HALF_OPEN) this.settleTime(this.clock.now());
  }

  /**
   * Applies the time-driven transitions: half-open -> open when the probes missed the max wait,
   * open -> half-open when the break is over. A half-open breaker waits for its first probe
   * however long that takes (the max wait runs from that probe), so however long the breaker
   * sat unused this is at most two transitions, in constant time.
   * @internal
   */
  settleTime(now: number): void {
    if (this.s === S_HALF_OPEN && now >= this.halfOpenDeadline) {
      this.open(this.halfOpenDeadline, 'half-open-timeout', false, now);
    }
    if (this.s === S_OPEN && now >= this.openUntil) enterHalfOpen(this, now);
  }

  /** @internal The break this breaker waits on may be over (see {@link Wakeups}). */
  wake(): void {
    wakeAtBreakEnd(this);
  }

  /** @internal Opens the breaker for a break starting at `start`; `now` is the time now. */
  open(start: number, reason: TransitionReason, fromWindow: boolean, now = start): void {
    const from = this.s;
    const o = this.o;
    if (from === S_CLOSED) this.consecutiveOpens = this.backoffLevel(start);
    const length = Math.min(
      o.backoffMax,
      o.breakDuration * o.backoffMultiplier ** this.consecutiveOpens,
    );
    this.consecutiveOpens++;
    this.probesInFlight = 0;
    this.openUntil = start + length;
    if (this.openError !== undefined) this.openError.openUntil = this.openUntil;
    this.enter(S_OPEN);
    awaitBreakEnd(this, now);
    const w = this.window;
    // A consecutive window has no rate: it reports the run that opened it.
    const run = o.windowKind === 'consecutive';
    const judged = fromWindow && w.calls > 0 && !run;
    const counted = run
      ? reason === 'consecutive-slow-calls'
        ? w.slowCalls
        : w.failures
      : w.calls;
    announce(
      this,
      from,
      S_OPEN,
      reason,
      now,
      judged ? w.failures / w.calls : Number.NaN,
      judged ? w.slowCalls / w.calls : Number.NaN,
      fromWindow ? counted : 0,
      length,
    );
    this.window.reset();
  }

  /**
   * @internal The backoff's growth steps at `now`: while closed after probes passed, one step
   * less per `breakBackoff.decay` closed, so only a dependency that stays healthy gets the
   * short break back.
   */
  backoffLevel(now: number): number {
    const n = this.consecutiveOpens;
    if (n === 0 || this.s !== S_CLOSED) return n;
    return Math.max(0, n - Math.floor((now - this.closedAt) / this.o.backoffDecay));
  }

  /** @internal A manual close clears the backoff; probes that pass start its decay. */
  close(reason: TransitionReason): void {
    if (reason === 'probes-succeeded' && this.o.backoffMultiplier !== 1) {
      this.closedAt = this.clock.now();
    } else {
      this.consecutiveOpens = 0;
    }
    this.window.reset();
    if (this.s === S_CLOSED) return;
    this.moveTo(S_CLOSED, reason);
  }

  /** @internal */
  moveTo(to: number, reason: TransitionReason): void {
    const from = this.s;
    this.enter(to);
    this.probesInFlight = 0;
    announceChange(this, from, to, reason);
  }

  /** @internal Moves to state `s` under a new generation: calls admitted before count no more. */
  enter(s: number): void {
    this.s = s;
    this.gen++;
    this.refreshQuiet();
  }

  /** @internal */
  refreshQuiet(): void {
    this.quietGen =
      this.s === S_CLOSED && this.o.handleResult === undefined && this.succeeded.size === 0
        ? this.gen
        : NOT_QUIET;
  }
}

/**
 * @internal Builds a breaker from options already resolved and validated, under `name`
 * (registries build many breakers from one options object), recording latency into
 * `latency` when it keeps a histogram.
 */
export function breakerFromResolved(
  o: ResolvedBreakerOptions,
  name: string,
  latency?: LatencyHistogram,
): CircuitBreaker {
  return buildFromResolved(CircuitBreaker, o, name, latency);
}

brand(CircuitBreaker, 'CircuitBreaker');
