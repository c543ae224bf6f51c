import type {
  InstanceView,
  KeyedGroup,
  KeyedInstancesView,
  KindHooks,
} from '../../protocol/kind.js';
import { Outcome } from '../../protocol/step.js';
import { LatencyHistogram } from '../../telemetry/LatencyHistogram.js';
import type { TransitionSink } from './Announcer.js';
import { breakerFromResolved, type CircuitBreaker, controllerOf } from './CircuitBreaker.js';
import { BreakerCounts } from './counts.js';
import type { CallOutcomeEvent } from './events.js';
import { halfOpenIdleFor, readIdle, writeIdle } from './idle.js';
import { sameWindowShape } from './makeWindow.js';
import type { ResolvedBreakerOptions } from './options.js';
import { checkBreakerOptions } from './reconfigure.js';
import { CircuitState } from './state.js';
import { addCountsOf, type CircuitBreakerStats } from './stats.js';

/**
 * @internal The keyed breakers of one registry name: built from one options object, shelved
 * as six numbers while idle (a closed breaker with nothing but successes in its window).
 */
export class BreakerGroup
  implements KeyedGroup<CircuitBreaker, ResolvedBreakerOptions, BreakerCounts>
{
  readonly stride = 6;
  instances!: KeyedInstancesView<CircuitBreaker>;
  /** Counts of keys dropped, and of shelved keys' transitions and rejection reasons. */
  readonly retired = new BreakerCounts();
  readonly latency: LatencyHistogram | undefined;
  /** One sink for every key: a breaker's key is read back from its name. */
  private readonly sink: TransitionSink;

  constructor(
    private readonly name: string,
    public options: ResolvedBreakerOptions,
    hooks: KindHooks,
  ) {
    this.latency = options.metrics.latencyEvery === 0 ? undefined : new LatencyHistogram();
    this.sink = (breakerName, event) =>
      hooks.stateChange(name, breakerName.slice(name.length + 1), event);
  }

  get metricsEnabled(): boolean {
    return this.options.metrics.enabled;
  }

  create(key: string): CircuitBreaker {
    const breaker = breakerFromResolved(this.options, `${this.name}:${key}`, this.latency);
    controllerOf(breaker).events.setSink(this.sink);
    return breaker;
  }

  revive(breaker: CircuitBreaker, store: Float64Array, at: number): void {
    readIdle(breaker, store, at);
  }

  shelve(breaker: CircuitBreaker, store: Float64Array, at: number, key: string): boolean {
    if (!writeIdle(breaker, store, at)) return false;
    // The numbers kept hold rejections but not their reasons nor the transitions: those go to
    // the retired counts, and the rejections kept are those of an open breaker.
    store[at + 4]! -= this.retired.addShelved(breaker);
    // Calls this breaker admitted may still be in flight: their outcomes go to whichever
    // breaker holds the key when they end, counted as calls of the generation they started in.
    const token = breaker.generation;
    const forward = (outcome: Outcome) => (event: CallOutcomeEvent) => {
      const current = this.instances.peek(key);
      if (current !== undefined && current !== breaker) {
        current.release(token, outcome, event.elapsed, event.detail);
      }
    };
    breaker.onSuccess(forward(Outcome.Success));
    breaker.onFailure(forward(Outcome.Failure));
    return true;
  }

  isProtected(breaker: CircuitBreaker, now: number, idleTimeout: number): boolean {
    // Open and half-open, and also the states set by hand (forced open, disabled,
    // metrics-only): evicting would silently bring the key back closed. Except a half-open
    // breaker that nobody called since its break ended, for the idle timeout: it refuses
    // nobody (its next call would be a probe), and keeping it would keep every host that
    // failed once and was never called again for ever.
    if (breaker.state === CircuitState.Closed) return false;
    return halfOpenIdleFor(breaker, now) < idleTimeout;
  }

  yieldsAtCeiling(breaker: CircuitBreaker): boolean {
    const state = breaker.state;
    return state === CircuitState.Open || state === CircuitState.HalfOpen;
  }

  retire(breaker: CircuitBreaker | undefined, store: Float64Array, at: number): void {
    if (breaker === undefined) this.retired.addNumbers(store, at, false);
    else addCountsOf(controllerOf(breaker), this.retired);
  }

  dispose(breaker: CircuitBreaker): void {
    breaker.dispose();
  }

  check(breaker: CircuitBreaker, options: ResolvedBreakerOptions): void {
    checkBreakerOptions(breaker, controllerOf(breaker), options, breaker.name);
  }

  apply(options: ResolvedBreakerOptions, keep: readonly CircuitBreaker[]): void {
    const old = this.options;
    this.options = options;
    for (const b of keep) controllerOf(b).applyOptions(options);
    if (!sameWindowShape(options, old)) {
      // A window of another shape starts empty, shelved ones included.
      this.instances.forEach((_key, b, store, at) => {
        if (b === undefined) store[at] = 0;
      });
    }
  }

  view(breaker: CircuitBreaker | undefined, store: Float64Array, at: number): InstanceView {
    if (breaker !== undefined) return breakerView(breaker);
    return { state: CircuitState.Closed, stats: shelvedBreakerStats(store, at) };
  }

  addShelved(counts: BreakerCounts, store: Float64Array, at: number): void {
    counts.addNumbers(store, at, true);
  }
}

/** @internal A breaker in snapshots: its state and stats. */
export function breakerView(breaker: CircuitBreaker): InstanceView {
  const stats = breaker.stats();
  return { state: stats.state, stats };
}

const NO_TRANSITIONS: Readonly<Record<CircuitState, number>> = Object.freeze({
  closed: 0,
  open: 0,
  'half-open': 0,
  disabled: 0,
  'forced-open': 0,
  'metrics-only': 0,
});

/** @internal The stats of a breaker shelved as numbers (a closed one). */
export function shelvedBreakerStats(store: Float64Array, at: number): CircuitBreakerStats {
  return {
    state: CircuitState.Closed,
    generation: store[at + 1]!,
    successes: store[at + 2]!,
    failures: store[at + 3]!,
    rejections: store[at + 4]!,
    ignored: store[at + 5]!,
    callsInWindow: store[at]!,
    failuresInWindow: 0,
    slowCallsInWindow: 0,
    probesInFlight: 0,
    // Shelving keeps only rejections of an open breaker (see `BreakerGroup.shelve`).
    rejectionsByReason: { open: store[at + 4]!, halfOpen: 0, forcedOpen: 0 },
    transitions: 0,
    transitionsTo: NO_TRANSITIONS,
  };
}
