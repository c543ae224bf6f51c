import type { Clock } from '../../clock/Clock.js';
import type { Disposer } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { brand } from '../../protocol/brand.js';
import type { RESULT_TYPE } from '../../protocol/result.js';
import {
  type Gate,
  NEEDS_NOTHING,
  type Outcome,
  StepKind,
  type StepNeeds,
} from '../../protocol/step.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import type { LatencyHistogram } from '../../telemetry/LatencyHistogram.js';
import { onlyArguments } from '../../validation/validate.js';
import { buildFromResolved, presetLatency, presetName, takePreset } from '../shared/preset.js';
import { withIdentity } from '../shared/reconfigure.js';
import { CircuitController } from './CircuitController.js';
import type { BrokenCircuitError } from './errors.js';
import type { CallOutcomeEvent, RejectedEvent, StateChangeEvent } from './events.js';
import { ManualControl } from './ManualControl.js';
import {
  type CircuitBreakerOptions,
  type ResolvedBreakerOptions,
  resolveBreakerOptions,
} from './options.js';
import { checkBreakerOptions } from './reconfigure.js';
import { type CircuitBreakerSnapshot, restoreSnapshot, snapshotOf } from './snapshot.js';
import { type CircuitState, S_HALF_OPEN, S_OPEN, STATE_NAMES } from './state.js';
import { type CircuitBreakerStats, statsOf } from './stats.js';

const NEEDS_UNTIMED: StepNeeds = Object.freeze({ ...NEEDS_NOTHING, callSlot: true });
const NEEDS_TIMED: StepNeeds = Object.freeze({ ...NEEDS_UNTIMED, startTime: true, endTime: true });

/**
 * The key of the prototype method through which the breaker's own folder reaches its
 * controller. `Symbol.for`, so that a copy of the library (the CommonJS build beside the ES
 * module one) reaches the controller of a breaker the other copy made; neither the type nor
 * `Object.keys` shows it.
 */
const CONTROLLER: unique symbol = Symbol.for('breakwater.circuitBreaker.controller') as never;

type Controlled = { [CONTROLLER](): CircuitController };

/** @internal The controller of `breaker` (of this copy of the library or another). */
export function controllerOf(breaker: CircuitBreaker): CircuitController {
  return (breaker as unknown as Controlled)[CONTROLLER]();
}

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
export class CircuitBreaker<T = unknown> extends RunsAlone implements Gate {
  /** Type only: the result type `handleResult` judges, read by `pipeline(...)`. */
  declare readonly [RESULT_TYPE]?: T;
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
  /** The clock this policy reads. */
  readonly clock: Clock;
  /** The state machine: every call goes straight to it. */
  readonly #c: CircuitController;
  /** Made on the first manual transition. */
  #manual: ManualControl | undefined = undefined;

  static {
    Object.defineProperty(CircuitBreaker.prototype, CONTROLLER, {
      value(this: CircuitBreaker): CircuitController {
        return this.#c;
      },
    });
  }

  constructor(options?: CircuitBreakerOptions<T>) {
    onlyArguments(arguments, 1, 'new CircuitBreaker()');
    super();
    const preset = takePreset<ResolvedBreakerOptions>();
    const sharedLatency = preset === undefined ? undefined : presetLatency();
    const o = preset ?? resolveBreakerOptions(options);
    this.name = preset === undefined ? o.name : presetName();
    this.clock = o.clock;
    this.needsDuration = o.slowCallDuration !== Number.POSITIVE_INFINITY;
    this.latencyEvery = o.metrics.latencyEvery;
    this.#c = new CircuitController(o, this.name, sharedLatency);
    if (o.initialState !== undefined) restoreSnapshot(this.#c, o.initialState);
    this.#c.refreshQuiet();
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
    checkBreakerOptions(this, this.#c, o, o.name);
    this.#c.applyOptions(o);
  }

  /** The current state, with any transition due by now applied first. */
  get state(): CircuitState {
    const c = this.#c;
    if (c.code === S_OPEN || c.code === S_HALF_OPEN) c.settleTime(this.clock.now());
    return STATE_NAMES[c.code]!;
  }

  /** The generation: it grows by one on every transition and on every `reset()`. */
  get generation(): number {
    return this.#c.generation;
  }

  /** What it needs of a pipeline's executor, asked when a pipeline is built. */
  needs(): StepNeeds {
    return this.needsDuration ? NEEDS_TIMED : NEEDS_UNTIMED;
  }

  /** Counters since construction, plus what the window holds now. */
  stats(): CircuitBreakerStats {
    return statsOf(this, this.#c);
  }

  // ---- the gate protocol ----------------------------------------------------------------------

  /** Gate protocol (`Gate.admit`): called by a pipeline's executor, not by users. */
  admit(now: number): number {
    return this.#c.admit(now);
  }

  /** Gate protocol (`Gate.release`): called by a pipeline's executor, not by users. */
  release(token: number, outcome: Outcome, elapsed: number, detail?: unknown): void {
    this.#c.release(token, outcome, elapsed, detail);
  }

  /**
   * {@link release} for an untimed call that succeeded, classifying `value`; a quiet
   * breaker's success only resets the window's run, so it skips the checks `release` makes.
   */
  releaseSuccess(token: number, value: unknown): void {
    this.#c.releaseSuccess(token, value);
  }

  /** Gate protocol (`Gate.classifyError`): called by a pipeline's executor, not by users. */
  classifyError(error: unknown): Outcome {
    return this.#c.classifyError(error);
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(value: unknown): Outcome {
    return this.#c.classifyResult(value);
  }

  /** The error a refused call rejects with. */
  rejection(): BrokenCircuitError {
    return this.#c.rejection();
  }

  // ---- events ---------------------------------------------------------------------------------

  /** Calls `listener` on every state change. Returns a function that unsubscribes it. */
  onStateChange(listener: (event: StateChangeEvent) => void): Disposer {
    return this.#c.events.onStateChange(listener);
  }
  /** Calls `listener` when an admitted call succeeds. */
  onSuccess(listener: (event: CallOutcomeEvent) => void): Disposer {
    const c = this.#c;
    const off = c.events.onSuccess(listener);
    c.refreshQuiet();
    return () => {
      off();
      c.refreshQuiet();
    };
  }
  /** Calls `listener` when an admitted call fails (as judged by `handle`/`handleResult`). */
  onFailure(listener: (event: CallOutcomeEvent) => void): Disposer {
    return this.#c.events.onFailure(listener);
  }
  /** Calls `listener` when the breaker refuses a call. */
  onRejected(listener: (event: RejectedEvent) => void): Disposer {
    return this.#c.events.onRejected(listener);
  }

  /** Removes all listeners. A breaker holds no timer, so nothing else needs releasing. */
  dispose(): void {
    this.#c.events.clear();
    this.#c.refreshQuiet();
  }

  // ---- manual control ---------------------------------------------------------------------------

  #control(): ManualControl {
    this.#manual ??= new ManualControl(this.#c);
    return this.#manual;
  }

  /**
   * Holds the breaker open until every returned disposer has been called, then closes it.
   * Calls are refused with {@link IsolatedCircuitError} meanwhile.
   */
  isolate(): Disposer {
    return this.#control().isolate();
  }

  /** Refuses every call until `reset()` (or another manual transition). */
  forceOpen(): void {
    this.#control().forceOpen();
  }

  /**
   * Closes the breaker and clears its window and backoff, whatever its state, under a new
   * generation: calls admitted before the reset never count after it (a closed breaker stays
   * closed, with no transition reported).
   */
  reset(): void {
    this.#control().reset();
  }

  /** Opens the breaker now, as if its thresholds had been crossed. */
  trip(): void {
    this.#control().trip();
  }

  /**
   * Lets every call through and never opens until `reset()`: outcomes go to no window. The
   * counters of `stats()`, the latency histogram and the success and failure events go on, so
   * metrics still show the traffic.
   */
  disable(): void {
    this.#control().disable();
  }

  /** Records outcomes but never opens, until `reset()`: for trying out thresholds. */
  metricsOnly(): void {
    this.#control().metricsOnly();
  }

  // ---- export and restore -------------------------------------------------------------------------

  /** The breaker's state as plain data; pass it back as `initialState` to restore it. */
  toJSON(): CircuitBreakerSnapshot {
    return snapshotOf(this.#c, this.clock.now());
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
