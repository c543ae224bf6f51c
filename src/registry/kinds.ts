import { type Bulkhead, bulkheadFromResolved } from '../policies/bulkhead/Bulkhead.js';
import type { ResolvedBulkheadOptions } from '../policies/bulkhead/options.js';
import {
  breakerFromResolved,
  type CircuitBreaker,
  type TransitionSink,
} from '../policies/circuit-breaker/CircuitBreaker.js';
import type { CallOutcomeEvent } from '../policies/circuit-breaker/events.js';
import type { ResolvedBreakerOptions } from '../policies/circuit-breaker/options.js';
import { CircuitState } from '../policies/circuit-breaker/state.js';
import type { ResolvedRateLimiterOptions } from '../policies/rate-limiter/options.js';
import { type RateLimiter, rateLimiterFromResolved } from '../policies/rate-limiter/RateLimiter.js';
import { Outcome } from '../protocol/step.js';
import { LatencyHistogram } from '../telemetry/LatencyHistogram.js';
import type { KeyedInstances, KeyedKind } from './KeyedInstances.js';
import { BreakerTotals, BulkheadTotals, LimiterTotals } from './RetiredTotals.js';

/**
 * @internal How a registry keeps keyed instances of each kind: how they are built, shelved
 * as numbers while idle, protected from eviction, and what their counts leave behind when
 * they go (so a name's totals in metrics never go down).
 */

/** Keyed breakers of one name: built from one options object, shelved when idle. */
export class BreakerKind implements KeyedKind<CircuitBreaker> {
  readonly stride = 6;
  instances!: KeyedInstances<CircuitBreaker>;
  /** Counts of keys dropped, and of shelved keys' transitions and rejection reasons. */
  readonly retired = new BreakerTotals();
  /** One histogram for every key of the name, when latency metrics are on. */
  readonly latency: LatencyHistogram | undefined;

  constructor(
    readonly name: string,
    public o: ResolvedBreakerOptions,
    private readonly sink: TransitionSink,
  ) {
    this.latency = o.metrics.latencyEvery === 0 ? undefined : new LatencyHistogram();
  }

  create(key: string): CircuitBreaker {
    const breaker = breakerFromResolved(this.o, `${this.name}:${key}`, this.latency);
    breaker.transitionSink = this.sink;
    return breaker;
  }

  /** The key of a breaker this kind built. */
  keyOf(breaker: CircuitBreaker): string {
    return breaker.name.slice(this.name.length + 1);
  }

  revive(breaker: CircuitBreaker, store: Float64Array, at: number): void {
    breaker.importIdle(store, at);
  }

  shelve(breaker: CircuitBreaker, store: Float64Array, at: number, key: string): boolean {
    if (!breaker.exportIdle(store, at)) return false;
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
    return breaker.waitingFor(now) < idleTimeout;
  }

  retire(breaker: CircuitBreaker | undefined, store: Float64Array, at: number): void {
    if (breaker === undefined) this.retired.addNumbers(store, at);
    else this.retired.add(breaker.stats());
  }

  dispose(breaker: CircuitBreaker): void {
    breaker.dispose();
  }
}

/** Keyed bulkheads of one name. An idle bulkhead holds nothing, so shelving keeps nothing. */
export class BulkheadKind implements KeyedKind<Bulkhead> {
  readonly stride = 0;
  /** Counts of keys dropped or shelved (a shelved bulkhead keeps no numbers). */
  readonly retired = new BulkheadTotals();
  readonly latency: LatencyHistogram | undefined;

  constructor(
    readonly name: string,
    public o: ResolvedBulkheadOptions,
  ) {
    this.latency = o.metrics.latencyEvery === 0 ? undefined : new LatencyHistogram();
  }

  create(key: string): Bulkhead {
    return bulkheadFromResolved(this.o, `${this.name}:${key}`, this.latency);
  }

  revive(): void {}

  shelve(bulkhead: Bulkhead): boolean {
    if (this.isProtected(bulkhead) || bulkhead.rejected.size !== 0) return false;
    this.retired.add(bulkhead.stats());
    bulkhead.dispose();
    return true;
  }

  retire(bulkhead: Bulkhead | undefined): void {
    if (bulkhead !== undefined) this.retired.add(bulkhead.stats());
  }

  isProtected(bulkhead: Bulkhead): boolean {
    return bulkhead.inFlight !== 0 || bulkhead.queueLength !== 0;
  }

  dispose(bulkhead: Bulkhead): void {
    bulkhead.dispose();
  }
}

/**
 * Keyed rate limiters of one name. A limiter back to idle (its whole burst free, nobody
 * waiting) admits exactly what a new one would, so shelving keeps nothing; one that is not
 * would forget the permits taken if it were evicted, letting more calls through than the rate.
 */
export class RateLimiterKind implements KeyedKind<RateLimiter> {
  readonly stride = 0;
  /** Counts of keys dropped or shelved (a shelved limiter keeps no numbers). */
  readonly retired = new LimiterTotals();

  constructor(
    readonly name: string,
    public o: ResolvedRateLimiterOptions,
  ) {}

  create(key: string): RateLimiter {
    return rateLimiterFromResolved(this.o, `${this.name}:${key}`);
  }

  revive(): void {}

  shelve(limiter: RateLimiter): boolean {
    if (this.isProtected(limiter) || limiter.limited.size !== 0) return false;
    this.retired.add(limiter.stats());
    limiter.dispose();
    return true;
  }

  retire(limiter: RateLimiter | undefined): void {
    if (limiter !== undefined) this.retired.add(limiter.stats());
  }

  isProtected(limiter: RateLimiter): boolean {
    // A waiter whose timer fires late (a busy event loop) can find the burst full again.
    return limiter.available < limiter.burst || limiter.stats().waiting !== 0;
  }

  dispose(limiter: RateLimiter): void {
    limiter.dispose();
  }
}

export interface Keyed<T, K extends KeyedKind<T>> {
  readonly kind: K;
  readonly instances: KeyedInstances<T>;
}
