import type { BulkheadStats } from '../policies/bulkhead/Bulkhead.js';
import type { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import { STATE_NAMES } from '../policies/circuit-breaker/state.js';
import type { BreakerCounters, CircuitBreakerStats } from '../policies/circuit-breaker/stats.js';
import type { RateLimiterStats } from './snapshot.js';

/**
 * @internal Counts left behind by the keyed breakers of one name that were dropped (and the
 * parts of shelved ones that the shelf does not keep), so the name's totals never go down.
 */
export class BreakerTotals implements BreakerCounters {
  successes = 0;
  failures = 0;
  ignored = 0;
  rejectedOpen = 0;
  rejectedHalfOpen = 0;
  rejectedForced = 0;
  /** By state entered, in the order of `STATE_NAMES`. */
  readonly transitionsTo = [0, 0, 0, 0, 0, 0];

  /** Adds everything a dropped breaker counted. */
  add(stats: CircuitBreakerStats): void {
    this.successes += stats.successes;
    this.failures += stats.failures;
    this.ignored += stats.ignored;
    this.rejectedOpen += stats.rejectionsByReason.open;
    this.rejectedHalfOpen += stats.rejectionsByReason.halfOpen;
    this.rejectedForced += stats.rejectionsByReason.forcedOpen;
    STATE_NAMES.forEach((state, i) => {
      this.transitionsTo[i]! += stats.transitionsTo[state];
    });
  }

  /** Adds another set of totals. */
  addTotals(t: BreakerTotals): void {
    this.successes += t.successes;
    this.failures += t.failures;
    this.ignored += t.ignored;
    this.rejectedOpen += t.rejectedOpen;
    this.rejectedHalfOpen += t.rejectedHalfOpen;
    this.rejectedForced += t.rejectedForced;
    for (let i = 0; i < 6; i++) this.transitionsTo[i]! += t.transitionsTo[i]!;
  }

  /** True when nothing was counted. */
  isEmpty(): boolean {
    return (
      this.successes + this.failures + this.ignored === 0 &&
      this.rejectedOpen + this.rejectedHalfOpen + this.rejectedForced === 0 &&
      this.transitionsTo.every((n) => n === 0)
    );
  }

  /** Adds the numbers of a dropped shelved breaker (see `CircuitBreaker.exportIdle`). */
  addNumbers(store: Float64Array, at: number): void {
    this.successes += store[at + 2]!;
    this.failures += store[at + 3]!;
    this.rejectedOpen += store[at + 4]!;
    this.ignored += store[at + 5]!;
  }

  /**
   * Adds what shelving `breaker` forgets (its transitions, and the reasons of its rejections
   * other than an open state), and returns how many rejections those were.
   */
  addShelved(breaker: CircuitBreaker): number {
    // Read without `stats()`: shelving happens on every eviction from the live set.
    const [halfOpen, forcedOpen] = breaker.rejectionsNotOpen();
    this.rejectedHalfOpen += halfOpen;
    this.rejectedForced += forcedOpen;
    const entered = breaker.transitionCounts();
    if (entered !== undefined) for (let i = 0; i < 6; i++) this.transitionsTo[i]! += entered[i]!;
    return halfOpen + forcedOpen;
  }
}

/** @internal Counts left behind by the keyed bulkheads of one name that were dropped or shelved. */
export class BulkheadTotals {
  admitted = 0;
  rejectedFull = 0;
  rejectedQueueTimeout = 0;

  add(stats: BulkheadStats): void {
    this.admitted += stats.admitted;
    this.rejectedFull += stats.rejectionsByReason.full;
    this.rejectedQueueTimeout += stats.rejectionsByReason.queueTimeout;
  }
}

/** @internal Counts left behind by the keyed rate limiters of one name that were dropped or shelved. */
export class LimiterTotals {
  admitted = 0;
  rejected = 0;

  add(stats: Pick<RateLimiterStats, 'admitted' | 'rejected'>): void {
    this.admitted += stats.admitted;
    this.rejected += stats.rejected;
  }
}
