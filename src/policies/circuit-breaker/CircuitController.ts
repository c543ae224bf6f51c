import type { Clock } from '../../clock/Clock.js';
import { Wakeups } from '../../clock/Wakeups.js';
import { ask } from '../../events/Listeners.js';
import { NO_TIME, Outcome, REJECTED } from '../../protocol/step.js';
import { LatencyHistogram } from '../../telemetry/LatencyHistogram.js';
import { isCountedError } from '../shared/classify.js';
import { Announcer } from './Announcer.js';
import { BreakerTally } from './BreakerTally.js';
import type { BrokenCircuitError } from './errors.js';
import type { TransitionReason } from './events.js';
import { HalfOpenProbes, type ProbeGate } from './HalfOpenProbes.js';
import { makeWindow, retuneWindow, sameWindowShape } from './makeWindow.js';
import type { ResolvedBreakerOptions } from './options.js';
import { Refusals } from './Refusals.js';
import {
  NOT_QUIET,
  S_CLOSED,
  S_DISABLED,
  S_FORCED_OPEN,
  S_HALF_OPEN,
  S_METRICS_ONLY,
  S_OPEN,
} from './state.js';
import type { HealthWindow } from './windows/HealthWindow.js';

/**
 * @internal The state machine of one circuit breaker: its state code and generation, the break
 * and its backoff, the half-open probes, and the window it judges; it admits calls and records
 * their outcomes (the gate protocol's hot path, which `CircuitBreaker` hands straight to it).
 * Every field is its own: the breaker's other parts read it through getters and change it
 * through the transitions below. Its counters are those of {@link BreakerTally}, inherited
 * rather than held, so that counting a call writes a field of this object, as before.
 */
export class CircuitController extends BreakerTally {
  /** The state code (see `state.ts`). */
  private s = S_CLOSED;
  private gen = 0;
  /**
   * The generation whose untimed successes take the short path of {@link releaseSuccess}:
   * `gen` while the breaker is closed, has no result predicate and no success listener, else
   * {@link NOT_QUIET}. Recomputed by {@link refreshQuiet} on every change of those, so a token
   * from before a transition never matches.
   */
  private quietGen = NOT_QUIET;
  private window: HealthWindow;
  /** The window needs the time of each outcome (a time window). */
  private needsNow: boolean;
  /** Replaced as a whole by {@link applyOptions}; every call reads it as before. */
  private o: ResolvedBreakerOptions;
  private openUntil = 0;
  /**
   * Open: the break may be over, so a refusal reads the clock. Set by a wake at `openUntil`
   * (see {@link Wakeups}); refusals before it skip the clock, except every 64th, which reads
   * it anyway in case timers cannot run (a loop that never yields to the event loop).
   */
  private breakMayBeOver = false;
  /** Time of the wake this breaker waits for, or Infinity. */
  private wakeAt = Number.POSITIVE_INFINITY;
  /**
   * How the shared wake-up heap holds this controller: weakly, so a breaker dropped while open
   * is collected before its break ends. Made on the first wait, then reused.
   */
  private weakSelf: WeakRef<CircuitController> | undefined = undefined;
  /** Growth steps of the break backoff, as of {@link closedAt} while closed. */
  private consecutiveOpens = 0;
  /** When a probe last closed it: the backoff decays from then. */
  private closedAt = 0;
  /** Made on the first half-open period. */
  private probes: HalfOpenProbes | undefined = undefined;
  /** Set by shared signals: asked before each half-open probe is admitted, never on the closed path. */
  private probeGate: ProbeGate | undefined = undefined;
  /** Made on the first refusal that needs an error. */
  private refusals: Refusals | undefined = undefined;
  /** The latency histogram, when kept; keyed breakers of one registry name share one. */
  readonly latency: LatencyHistogram | undefined;
  /** The histogram is its registry name's, not its own: `stats()` leaves it out. */
  readonly latencyShared: boolean;
  readonly events: Announcer;

  /** The clock of its options, one load away on the calls that read it. */
  private readonly clock: Clock;

  constructor(
    o: ResolvedBreakerOptions,
    readonly name: string,
    sharedLatency: LatencyHistogram | undefined,
  ) {
    super();
    this.o = o;
    this.clock = o.clock;
    this.events = new Announcer(name);
    this.enteredAt = o.clock.now();
    this.latency =
      o.metrics.latencyEvery === 0 ? undefined : (sharedLatency ?? new LatencyHistogram());
    this.latencyShared = sharedLatency !== undefined;
    this.needsNow = o.windowKind === 'time';
    this.window = makeWindow(o);
  }

  // ---- what the other parts read ---------------------------------------------------------------

  /** The options in force. */
  get options(): ResolvedBreakerOptions {
    return this.o;
  }
  /** The state code, without applying a transition due. */
  get code(): number {
    return this.s;
  }
  get generation(): number {
    return this.gen;
  }
  /** When the current (or last) break ends. */
  get breakEnd(): number {
    return this.openUntil;
  }
  /** The window, to read (its counts, its snapshot). */
  get health(): HealthWindow {
    return this.window;
  }
  /** The window holds the times of its outcomes (a time window). */
  get timed(): boolean {
    return this.needsNow;
  }
  /** Probes admitted and not ended (0 unless half-open). */
  get probesInFlight(): number {
    return this.s === S_HALF_OPEN && this.probes !== undefined ? this.probes.inFlight : 0;
  }
  /** Half-open: when the probes must decide, counted from the first; else Infinity. */
  get halfOpenDeadline(): number {
    return this.s === S_HALF_OPEN && this.probes !== undefined
      ? this.probes.deadline
      : Number.POSITIVE_INFINITY;
  }

  /** The errors of refusals, once a refusal needed one. */
  get refusalErrors(): Refusals | undefined {
    return this.refusals;
  }

  // ---- admission --------------------------------------------------------------------------------

  admit(now: number): number {
    // Small enough to inline into the executor; the other states are a call away.
    return this.s === S_CLOSED ? this.gen : this.admitNotClosed(now);
  }

  private admitNotClosed(now: number): number {
    const s = this.s;
    if (s === S_DISABLED || s === S_METRICS_ONLY) return this.gen;
    // Held open by hand: no clock to read, nothing to decide.
    if (s === S_FORCED_OPEN) return this.refuse();
    if (s === S_OPEN && !this.breakMayBeOver && (this.rejections & 63) !== 63) {
      return this.refuse();
    }
    return this.acquireSlow(now === NO_TIME ? this.clock.now() : now);
  }

  private acquireSlow(now: number): number {
    if (this.s === S_OPEN || this.s === S_HALF_OPEN) this.settleTime(now);
    if (this.s === S_HALF_OPEN) {
      const probes = this.probes!;
      if (
        probes.hasRoom(this.o.probes, this.o.maxConcurrentProbes) &&
        this.probeGate?.mayProbe(now) !== false
      ) {
        probes.start(now, this.o.halfOpenMaxWait);
        return this.gen;
      }
    } else if (this.s !== S_OPEN && this.s !== S_FORCED_OPEN) {
      return this.gen;
    }
    return this.refuse();
  }

  private refuse(): number {
    const s = this.s;
    this.refused(s);
    if (this.events.rejectionWatched) {
      const error = this.rejection();
      if (this.o.debug) this.refusals!.keep(error);
      this.events.rejection(error, s);
    }
    return REJECTED;
  }

  /** The error a refused call rejects with. */
  rejection(): BrokenCircuitError {
    const refusals = (this.refusals ??= new Refusals(this.name, this.clock));
    const pending = refusals.takePending();
    if (pending !== undefined) return pending;
    if (this.s === S_FORCED_OPEN) return refusals.whileIsolated(this.o.debug);
    if (this.s === S_HALF_OPEN) {
      // It changes state at the latest when its probes must have decided (or, before any
      // probe of its own started, a max wait from now).
      const d = this.halfOpenDeadline;
      const until = d === Number.POSITIVE_INFINITY ? this.clock.now() + this.o.halfOpenMaxWait : d;
      return refusals.whileHalfOpen(until, this.o.debug);
    }
    return refusals.whileOpen(this.openUntil, this.o.debug);
  }

  // ---- outcomes ---------------------------------------------------------------------------------

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
    if (failure) this.failures++;
    else this.successes++;
    // NaN (the call was not timed) fails the comparison.
    if (this.latency !== undefined && elapsed >= 0) this.latency.record(elapsed);
    const list = failure ? this.events.failed : this.events.succeeded;
    if (list.size !== 0) list.emit({ detail, elapsed, slow });
    if (token !== this.gen) return;
    const s = this.s;
    if (s === S_CLOSED || s === S_METRICS_ONLY) {
      const now = this.needsNow ? this.clock.now() : 0;
      if (this.window.record(failure, slow, now) && s === S_CLOSED) this.judgeWindow(now);
    } else if (s === S_HALF_OPEN) {
      this.probes!.end(failure || slow);
      this.judgeProbes();
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
    this.successes++;
    const now = this.needsNow ? this.clock.now() : 0;
    if (this.window.record(false, false, now)) this.judgeWindow(now);
  }

  private releaseIgnored(token: number): void {
    this.ignored++;
    // The probe told us nothing: give its slot back.
    if (token === this.gen && this.s === S_HALF_OPEN) this.probes!.giveBack();
  }

  private judgeWindow(now: number): void {
    const reason = this.window.judge(now);
    if (reason !== undefined) this.open(this.needsNow ? now : this.clock.now(), reason, true);
  }

  /** Closes or re-opens the half-open breaker once its probes have decided. */
  private judgeProbes(): void {
    const verdict = this.probes!.verdict(this.o.probes, this.o.successRatio);
    if (verdict === 'close') this.close('probes-succeeded');
    else if (verdict === 'reopen') this.open(this.clock.now(), 'probes-failed', false);
  }

  classifyError(error: unknown): Outcome {
    if (!isCountedError(error)) return Outcome.Ignored;
    // A predicate that throws counts the call as failed: the safe side for a breaker.
    return ask(this.o.handle, error, true) ? Outcome.Failure : Outcome.Success;
  }

  classifyResult(value: unknown): Outcome {
    const h = this.o.handleResult;
    return h !== undefined && ask(h, value, true) ? Outcome.Failure : Outcome.Success;
  }

  // ---- time-driven transitions -----------------------------------------------------------------

  /** Applies the transitions due by now (see {@link settleTime}). */
  settleNow(): void {
    if (this.s === S_OPEN || this.s === S_HALF_OPEN) this.settleTime(this.clock.now());
  }

  /**
   * Applies the time-driven transitions: half-open -> open when the probes missed the max wait,
   * open -> half-open when the break is over. A half-open breaker waits for its first probe
   * however long that takes (the max wait runs from that probe), so however long the breaker
   * sat unused this is at most two transitions, in constant time.
   */
  settleTime(now: number): void {
    if (this.s === S_HALF_OPEN) {
      const deadline = this.probes!.deadline;
      if (now >= deadline) this.open(deadline, 'half-open-timeout', false, now);
    }
    if (this.s === S_OPEN && now >= this.openUntil) this.enterHalfOpen(now);
  }

  private enterHalfOpen(now: number): void {
    this.enter(S_HALF_OPEN);
    (this.probes ??= new HalfOpenProbes()).begin();
    this.announce(S_OPEN, S_HALF_OPEN, 'break-elapsed', now);
  }

  /** The break may be over (see {@link Wakeups}): the shared heap's wake at {@link openUntil}. */
  wake(): void {
    this.wakeAt = Number.POSITIVE_INFINITY;
    if (this.s !== S_OPEN) return;
    const now = this.clock.now();
    // Woken for an earlier break (closed and re-opened since), or a timer that ran early.
    if (now < this.openUntil) this.awaitBreakEnd(now);
    else this.breakMayBeOver = true;
  }

  /**
   * Arranges to hear when the break ends, as seen at `now`: one wake-up per break from the
   * clock's shared heap, so refusals need not read the clock.
   */
  private awaitBreakEnd(now: number): void {
    const clock = this.clock;
    if (clock.cheapNow === true) {
      this.breakMayBeOver = true;
      return;
    }
    this.breakMayBeOver = false;
    // One pending wake per breaker: a later one would only find the breaker still open.
    if (this.openUntil >= this.wakeAt) return;
    this.wakeAt = this.openUntil;
    this.weakSelf ??= new WeakRef(this);
    Wakeups.of(clock).schedule(this.openUntil, now, this.weakSelf);
  }

  /** Sets the end of the break to `until`, and hears of it. */
  private breakUntil(until: number, now: number): void {
    this.openUntil = until;
    this.refusals?.breakEndsAt(until);
    this.awaitBreakEnd(now);
  }

  // ---- transitions ------------------------------------------------------------------------------

  /** Opens the breaker for a break starting at `start`; `now` is the time now. */
  open(start: number, reason: TransitionReason, fromWindow: boolean, now = start): void {
    const from = this.s;
    const o = this.o;
    if (from === S_CLOSED) this.consecutiveOpens = this.backoffLevel(start);
    const length = Math.min(
      o.backoffMax,
      o.breakDuration * o.backoffMultiplier ** this.consecutiveOpens,
    );
    this.consecutiveOpens++;
    this.enter(S_OPEN);
    this.breakUntil(start + length, now);
    const w = this.window;
    // A consecutive window has no rate: it reports the run that opened it.
    const run = o.windowKind === 'consecutive';
    const judged = fromWindow && w.calls > 0 && !run;
    const counted = run
      ? reason === 'consecutive-slow-calls'
        ? w.slowCalls
        : w.failures
      : w.calls;
    this.entered(S_OPEN, now);
    this.events.transition(
      from,
      S_OPEN,
      reason,
      this.gen,
      judged ? w.failures / w.calls : Number.NaN,
      judged ? w.slowCalls / w.calls : Number.NaN,
      fromWindow ? counted : 0,
      length,
    );
    this.window.reset();
  }

  /**
   * Holds the breaker open until `until`, as shared signals ask: a closed or half-open breaker
   * opens (reason `shared-open`), an open one keeps its break or a longer one. Disabled,
   * metrics-only and forced-open breakers are left alone. True when the breaker opened.
   */
  holdOpen(until: number): boolean {
    const now = this.clock.now();
    this.settleTime(now);
    const from = this.s;
    if (!(until > now)) return false;
    if (from === S_OPEN) {
      // A longer break only: shared state never shortens what the local breaker decided.
      if (until > this.openUntil) this.breakUntil(until, now);
      return false;
    }
    if (from !== S_CLOSED && from !== S_HALF_OPEN) return false;
    // Not a break of its own: the backoff of later breaks is left as it is.
    this.enter(S_OPEN);
    this.breakUntil(until, now);
    this.announce(from, S_OPEN, 'shared-open', now, until - now);
    this.window.reset();
    return true;
  }

  /**
   * The backoff's growth steps at `now`: while closed after probes passed, one step less per
   * `breakBackoff.decay` closed, so only a dependency that stays healthy gets the short break
   * back.
   */
  backoffLevel(now: number): number {
    const n = this.consecutiveOpens;
    if (n === 0 || this.s !== S_CLOSED) return n;
    return Math.max(0, n - Math.floor((now - this.closedAt) / this.o.backoffDecay));
  }

  /** Closes the breaker. A manual close clears the backoff; probes that pass start its decay. */
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

  /** Moves to state code `to`, announced with `reason`. */
  moveTo(to: number, reason: TransitionReason): void {
    const from = this.s;
    this.enter(to);
    this.announce(from, to, reason);
  }

  /** A new generation without a transition: calls admitted before count no more. */
  renew(): void {
    this.enter(this.s);
  }

  /** Empties the window. */
  clearWindow(): void {
    this.window.reset();
  }

  /** Moves to state `s` under a new generation: calls admitted before count no more. */
  private enter(s: number): void {
    this.s = s;
    this.gen++;
    this.refreshQuiet();
  }

  /** Counts a transition no window made, and tells whoever listens. */
  private announce(
    from: number,
    to: number,
    reason: TransitionReason,
    now?: number,
    breakDuration = 0,
  ): void {
    this.entered(to, now ?? this.clock.now());
    this.events.transition(from, to, reason, this.gen, Number.NaN, Number.NaN, 0, breakDuration);
  }

  /** Recomputes the short path of untimed successes (see {@link quietGen}). */
  refreshQuiet(): void {
    this.quietGen =
      this.s === S_CLOSED && this.o.handleResult === undefined && this.events.succeeded.size === 0
        ? this.gen
        : NOT_QUIET;
  }

  // ---- options, restore, shelving --------------------------------------------------------------

  /** Swaps in options that passed `checkBreakerOptions`. */
  applyOptions(o: ResolvedBreakerOptions): void {
    const sameShape = sameWindowShape(o, this.o);
    this.o = o;
    if (sameShape) retuneWindow(this.window, o);
    else {
      this.window = makeWindow(o);
      this.needsNow = o.windowKind === 'time';
    }
    this.refreshQuiet();
    // Probe outcomes already in are judged against the new counts.
    if (this.s === S_HALF_OPEN && this.probes!.anyEnded) this.judgeProbes();
  }

  /** Sets the probe gate (undefined: none). */
  setProbeGate(gate: ProbeGate | undefined): void {
    this.probeGate = gate;
  }

  get gate(): ProbeGate | undefined {
    return this.probeGate;
  }

  /**
   * Puts the breaker, just built, in state code `target` with the backoff given; an open one
   * breaks for `openRemaining` ms more. Times are counted from now.
   */
  restore(target: number, consecutiveOpens: number, openRemaining: number, now: number): void {
    this.consecutiveOpens = consecutiveOpens;
    this.closedAt = now;
    if (target === S_OPEN || target === S_HALF_OPEN) {
      // A half-open breaker's probes belonged to the old process: start a fresh open period.
      this.enter(S_OPEN);
      this.breakUntil(now + (target === S_OPEN ? openRemaining : 0), now);
    } else if (target !== S_CLOSED) {
      this.enter(target);
    }
  }

  /** A breaker rebuilt from its shelved numbers takes its generation back. */
  restoreGeneration(gen: number): void {
    this.gen = gen;
    this.refreshQuiet();
  }
}
