import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { StepKind } from '../../protocol/step.js';
import { LatencyHistogram } from '../../telemetry/LatencyHistogram.js';
import type { ResolvedMetrics } from '../../telemetry/metrics.js';
import type { CircuitBreaker, TransitionSink } from './CircuitBreaker.js';
import { BrokenCircuitError, circuitBreakerCodes, IsolatedCircuitError } from './errors.js';
import type { CallOutcomeEvent, RejectedEvent, StateChangeEvent } from './events.js';
import { makeWindow } from './makeWindow.js';
import type { ResolvedBreakerOptions } from './options.js';
import type { ProbeGate } from './probes.js';
import { NOT_QUIET, S_CLOSED } from './state.js';
import type { HealthWindow } from './windows/HealthWindow.js';

/** The listener list of every breaker event nobody listens to; never added to. */
// biome-ignore lint/suspicious/noExplicitAny: one empty list stands for a list of any event
const NO_LISTENERS: Listeners<any> = new Listeners();

/**
 * What a circuit breaker holds (its settings, state, counters and listeners, declared here in
 * the order every breaker object is laid out) and its listener methods, so that
 * `CircuitBreaker.ts` holds the state machine. The breaker's files beside this one read and
 * write these members.
 */
export abstract class BreakerFields extends RunsAlone {
  readonly stepKind = StepKind.Gate;
  readonly mayWait = false;
  /**
   * True when calls must be timed (slow-call tracking is on). Pipelines read it when they are
   * built, so it never changes: `reconfigure` cannot turn slow-call tracking on for a breaker
   * built without it.
   */
  readonly needsDuration: boolean;
  /** The instance name given in the options. */
  readonly name: string;
  /** Time one call in this many for the latency histogram (0: none). */
  readonly latencyEvery: number;
  /** @internal The metrics settings it was built with. */
  readonly metrics: ResolvedMetrics;
  /**
   * @internal The latency histogram, when kept. Keyed breakers of one registry name share
   * one, so a million keys do not hold a million histograms.
   */
  readonly latency: LatencyHistogram | undefined;
  /** @internal The histogram is its registry name's, not its own: `stats()` leaves it out. */
  readonly latencyShared: boolean;
  /** @internal Set by a registry: sees every transition. */
  transitionSink: TransitionSink | undefined = undefined;
  /**
   * @internal Set by shared signals (`breakwater/redis`): asked before each half-open probe is
   * admitted, never on the closed path.
   */
  probeGate: ProbeGate | undefined = undefined;

  /** @internal Replaced as a whole by `reconfigure`; every call reads it as before. */
  o: ResolvedBreakerOptions;
  /** The clock this policy reads. */
  readonly clock: Clock;
  // The members marked internal are also read and written by the modules beside this one.
  /** @internal */ window: HealthWindow;
  /** @internal */ needsNow: boolean;
  /** @internal The state code. */ s = S_CLOSED;
  /** @internal */ gen = 0;
  /**
   * The generation whose untimed successes take the short path of `CircuitBreaker.releaseSuccess`:
   * `gen` while the breaker is closed, has no result predicate and no success listener, else
   * {@link NOT_QUIET}. Recomputed by `refreshQuiet` on every change of those, so a token
   * from before a transition never matches.
   */
  /** @internal */ quietGen = NOT_QUIET;
  /** @internal */ openUntil = 0;
  /**
   * @internal Open: the break may be over, so a refusal reads the clock. Set by a wake at
   * `openUntil` (see {@link Wakeups}); refusals before it skip the clock, except every 64th,
   * which reads it anyway in case timers cannot run (a loop that never yields to the event loop).
   */
  breakMayBeOver = false;
  /** @internal Time of the wake this breaker waits for, or Infinity. */
  wakeAt = Number.POSITIVE_INFINITY;
  /**
   * @internal How the shared wake-up heap holds this breaker: weakly, so a breaker dropped while
   * open is collected before its break ends. Made on the first wait, then reused.
   */
  weakSelf: WeakRef<CircuitBreaker> | undefined = undefined;
  /** @internal Half-open: when the probes must decide, counted from the first; else Infinity. */
  halfOpenDeadline = Number.POSITIVE_INFINITY;
  /** @internal Growth steps of the break backoff, as of {@link closedAt} while closed. */
  consecutiveOpens = 0;
  /** @internal When a probe last closed it: the backoff decays from then. */
  closedAt = 0;
  /** @internal */ probesStarted = 0;
  /** @internal */ probesInFlight = 0;
  /** @internal */ probeSuccesses = 0;
  /** @internal */ probeFailures = 0;
  /** @internal */ isolations = 0;
  /** @internal */ isolationEpoch = 0;
  /** @internal debug mode: the fresh error of the refusal being made, also handed to the caller. */
  pendingError: BrokenCircuitError | undefined = undefined;
  /**
   * @internal The stackless error every refusal of an open (or full half-open) breaker rejects
   * with, its `openUntil` kept equal to the breaker's; made on the first refusal (most breakers
   * never refuse), then the same object for every refusal after it.
   */
  openError: BrokenCircuitError | undefined = undefined;
  /** @internal The error of refusals while half-open, made on the first. */
  halfOpenError: BrokenCircuitError | undefined = undefined;
  /** @internal The same for a breaker held open by hand; made on its first refusal. */
  isolatedError: IsolatedCircuitError | undefined = undefined;
  /** @internal */ nSuccesses = 0;
  /** @internal */ nFailures = 0;
  /** @internal */ nRejections = 0;
  /** @internal */ nIgnored = 0;
  /** @internal */ nRejectedHalfOpen = 0;
  /** @internal */ nRejectedForced = 0;
  /** @internal Transitions by state entered; made on the first transition. */
  entered: number[] | undefined = undefined;
  /** @internal */ enteredAt: number;

  // Each list is the shared empty one until its first listener (few breakers have any): the
  // emitters read `size` as before, from an object of the same class.
  /** @internal */ stateChanged: Listeners<StateChangeEvent> = NO_LISTENERS;
  /** @internal */ succeeded: Listeners<CallOutcomeEvent> = NO_LISTENERS;
  /** @internal */ failed: Listeners<CallOutcomeEvent> = NO_LISTENERS;
  /** @internal */ rejected: Listeners<RejectedEvent> = NO_LISTENERS;

  constructor(
    o: ResolvedBreakerOptions,
    name: string,
    sharedLatency: LatencyHistogram | undefined,
  ) {
    super();
    this.o = o;
    this.name = name;
    this.clock = o.clock;
    this.enteredAt = o.clock.now();
    this.needsDuration = o.slowCallDuration !== Number.POSITIVE_INFINITY;
    this.metrics = o.metrics;
    this.latencyEvery = o.metrics.latencyEvery;
    this.latency = this.latencyEvery === 0 ? undefined : (sharedLatency ?? new LatencyHistogram());
    this.latencyShared = sharedLatency !== undefined;
    this.needsNow = o.windowKind === 'time';
    this.window = makeWindow(o);
  }

  /** @internal Makes {@link openError}, on the first refusal that needs it. */
  makeOpenError(): BrokenCircuitError {
    const error = stackless(() => new BrokenCircuitError(this.name, this.clock, this.openUntil));
    this.openError = error;
    return error;
  }

  /** @internal Makes {@link halfOpenError}, on the first refusal that needs it. */
  makeHalfOpenError(): BrokenCircuitError {
    const error = stackless(
      () => new BrokenCircuitError(this.name, this.clock, 0, circuitBreakerCodes.CircuitOpen, true),
    );
    this.halfOpenError = error;
    return error;
  }

  /** @internal Makes {@link isolatedError}, on the first refusal that needs it. */
  makeIsolatedError(): IsolatedCircuitError {
    const error = stackless(() => new IsolatedCircuitError(this.name, this.clock));
    this.isolatedError = error;
    return error;
  }

  /** @internal Recomputes the short path of untimed successes (see `quietGen`). */
  abstract refreshQuiet(): void;

  /** Calls `listener` on every state change. Returns a function that unsubscribes it. */
  onStateChange(listener: (event: StateChangeEvent) => void): Disposer {
    if (this.stateChanged === NO_LISTENERS) this.stateChanged = new Listeners();
    return this.stateChanged.add(listener);
  }
  /** Calls `listener` when an admitted call succeeds. */
  onSuccess(listener: (event: CallOutcomeEvent) => void): Disposer {
    if (this.succeeded === NO_LISTENERS) this.succeeded = new Listeners();
    const off = this.succeeded.add(listener);
    this.refreshQuiet();
    return () => {
      off();
      this.refreshQuiet();
    };
  }
  /** Calls `listener` when an admitted call fails (as judged by `handle`/`handleResult`). */
  onFailure(listener: (event: CallOutcomeEvent) => void): Disposer {
    if (this.failed === NO_LISTENERS) this.failed = new Listeners();
    return this.failed.add(listener);
  }
  /** Calls `listener` when the breaker refuses a call. */
  onRejected(listener: (event: RejectedEvent) => void): Disposer {
    if (this.rejected === NO_LISTENERS) this.rejected = new Listeners();
    return this.rejected.add(listener);
  }

  /** Removes all listeners. A breaker holds no timer, so nothing else needs releasing. */
  dispose(): void {
    // Disposers handed out before still remove from the lists they were made for.
    this.stateChanged = NO_LISTENERS;
    this.succeeded = NO_LISTENERS;
    this.failed = NO_LISTENERS;
    this.rejected = NO_LISTENERS;
    this.refreshQuiet();
  }
}
