import { type CircuitBreaker, controllerOf } from './CircuitBreaker.js';
import { S_CLOSED, STATE_NAMES } from './state.js';
import { addCountsOf, type BreakerCounters } from './stats.js';

/**
 * Counts of one breaker series: one breaker, the sum of several, or what the keyed
 * breakers of one name left behind when they were dropped or shelved, so the name's totals
 * never go down.
 */
export class BreakerCounts implements BreakerCounters {
  successes = 0;
  failures = 0;
  ignored = 0;
  rejectedOpen = 0;
  rejectedHalfOpen = 0;
  rejectedForced = 0;
  /** By state entered, in the order of `STATE_NAMES`. */
  readonly transitionsTo = [0, 0, 0, 0, 0, 0];
  /** Breakers in each state, in the order of `STATE_NAMES`. */
  readonly inState = [0, 0, 0, 0, 0, 0];

  /** Adds a breaker's counters and its state, without building its stats. */
  addBreaker(breaker: CircuitBreaker): void {
    addCountsOf(controllerOf(breaker), this);
    this.inState[STATE_NAMES.indexOf(breaker.state)]!++;
  }

  /**
   * Adds the numbers of a breaker shelved by `writeIdle` (a closed one),
   * counted in its state when `inState`.
   */
  addNumbers(store: Float64Array, at: number, inState: boolean): void {
    this.successes += store[at + 2]!;
    this.failures += store[at + 3]!;
    this.rejectedOpen += store[at + 4]!;
    this.ignored += store[at + 5]!;
    if (inState) this.inState[S_CLOSED]!++;
  }

  /**
   * Adds what shelving `breaker` forgets (its transitions, and the reasons of its rejections
   * other than an open state), and returns how many rejections those were.
   */
  addShelved(breaker: CircuitBreaker): number {
    // Read without `stats()`: shelving happens on every eviction from the live set.
    const t = controllerOf(breaker);
    const halfOpen = t.rejectedHalfOpen;
    const forcedOpen = t.rejectedForced;
    this.rejectedHalfOpen += halfOpen;
    this.rejectedForced += forcedOpen;
    const entered = t.enteredBy;
    if (entered !== undefined) for (let i = 0; i < 6; i++) this.transitionsTo[i]! += entered[i]!;
    return halfOpen + forcedOpen;
  }
}
