import type { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import { type CircuitState, S_CLOSED, STATE_NAMES } from '../policies/circuit-breaker/state.js';
import type { CircuitBreakerStats } from '../policies/circuit-breaker/stats.js';
import type { BreakerKind, Keyed } from './kinds.js';
import type { RegistryInstances } from './Registry.js';
import { BreakerTotals } from './RetiredTotals.js';
import {
  breakerEntry,
  bulkheadEntry,
  pushNamedAfterBreakers,
  type RegistryInstanceSnapshot,
  rateLimiterEntry,
  shelvedBreakerEntry,
} from './snapshot.js';

/**
 * @internal Bounded views of a registry for health endpoints, dashboards and metrics: a keyed
 * name may hold millions of keys, but only a few are shown one by one, so only those few get a
 * snapshot; the others are read for their state and summed without building any object.
 */

/** Keyed instances of one kind and name left out of a listing. */
export interface OmittedKeys {
  readonly kind: RegistryInstanceSnapshot['kind'];
  readonly name: string;
  /** How many keys were left out. */
  readonly count: number;
}

/** @internal Counts of one breaker series (one instance, or the sum of several). */
export class BreakerCounts extends BreakerTotals {
  /** Breakers in each state, in the order of `STATE_NAMES`. */
  readonly inState = [0, 0, 0, 0, 0, 0];

  addBreaker(s: CircuitBreakerStats): void {
    this.add(s);
    this.inState[STATE_NAMES.indexOf(s.state)]!++;
  }
}

/** @internal A keyed breaker to show one by one. */
export interface ListedBreaker {
  readonly key: string;
  /** The breaker, or undefined for one shelved as {@link numbers}. */
  readonly breaker: CircuitBreaker | undefined;
  /** The numbers of a shelved (closed) breaker, copied when it was met. */
  readonly numbers: Float64Array | undefined;
}

/** @internal What {@link listKeyedBreakers} found. */
export interface KeyedBreakerListing {
  /** At most `max` keys: those not closed, then closed ones, most recently used first. */
  readonly shown: readonly ListedBreaker[];
  /** Keys not shown. */
  readonly hidden: number;
}

/**
 * @internal The keys of a keyed breaker name to show one by one (those not closed first, then
 * the most recently used), adding the counts of the others to `others` when given. Calls
 * `onNotClosed` for every key whose breaker is not closed, shown or not. Snapshots nothing:
 * the caller snapshots what it shows; the others cost a read of their state (none for a
 * shelved one, which is closed) and, to sum them, of their counters.
 */
export function listKeyedBreakers(
  { kind, instances }: Keyed<CircuitBreaker, BreakerKind>,
  max: number,
  others?: BreakerCounts,
  onNotClosed?: (key: string, state: CircuitState) => void,
): KeyedBreakerListing {
  instances.sweepAll();
  const stride = kind.stride;
  const notClosed: ListedBreaker[] = [];
  const closed: ListedBreaker[] = [];
  let hidden = 0;
  instances.forEach((key, breaker, store, at) => {
    if (breaker === undefined) {
      // Shelved: a closed breaker kept as numbers.
      if (closed.length < max) {
        closed.push({ key, breaker, numbers: store.slice(at, at + stride) });
      } else {
        hidden++;
        if (others !== undefined) {
          others.addNumbers(store, at);
          others.inState[S_CLOSED]!++;
        }
      }
      return;
    }
    const state = breaker.state;
    if (state !== 'closed') {
      onNotClosed?.(key, state);
      if (notClosed.length < max) {
        notClosed.push({ key, breaker, numbers: undefined });
        return;
      }
    } else if (closed.length < max) {
      closed.push({ key, breaker, numbers: undefined });
      return;
    }
    hidden++;
    if (others !== undefined) {
      breaker.addCounts(others);
      others.inState[STATE_NAMES.indexOf(state)]!++;
    }
  });
  // Closed keys met before `max` keys that are not closed had been seen give way to them.
  const room = max - notClosed.length;
  for (let i = room; i < closed.length; i++) {
    hidden++;
    if (others === undefined) continue;
    const { breaker, numbers } = closed[i]!;
    if (breaker === undefined) others.addNumbers(numbers!, 0);
    else breaker.addCounts(others);
    others.inState[S_CLOSED]!++;
  }
  if (closed.length > room) closed.length = room;
  return { shown: notClosed.concat(closed), hidden };
}

/** @internal What {@link limitedSnapshot} returns. */
export interface LimitedSnapshot {
  readonly instances: RegistryInstanceSnapshot[];
  readonly omitted: OmittedKeys[];
}

/**
 * @internal Every named instance and at most `max` keys of each keyed kind and name (breakers
 * that are not closed first, then the most recently used), in the order of
 * `Registry.snapshot`, and the number of keys left out per name. Calls `onNotClosed` for every
 * breaker that is not closed, named or keyed, listed or not. Only the instances listed are
 * snapshotted.
 */
export function limitedSnapshot(
  all: RegistryInstances,
  max: number,
  onNotClosed?: (name: string, key: string | undefined, state: CircuitState) => void,
): LimitedSnapshot {
  const instances: RegistryInstanceSnapshot[] = [];
  const omitted: OmittedKeys[] = [];
  for (const [name, { policy }] of all.breakers) {
    const entry = breakerEntry(name, undefined, policy);
    instances.push(entry);
    if (entry.kind === 'circuitBreaker' && entry.state !== 'closed') {
      onNotClosed?.(name, undefined, entry.state);
    }
  }
  pushNamedAfterBreakers(all, instances);
  for (const [name, group] of all.keyedBreakers) {
    const visit =
      onNotClosed === undefined
        ? undefined
        : (key: string, state: CircuitState) => onNotClosed(name, key, state);
    const { shown, hidden } = listKeyedBreakers(group, max, undefined, visit);
    for (const { key, breaker, numbers } of shown) {
      instances.push(
        breaker === undefined
          ? shelvedBreakerEntry(name, key, numbers!, 0)
          : breakerEntry(name, key, breaker),
      );
    }
    if (hidden > 0) omitted.push({ kind: 'circuitBreaker', name, count: hidden });
  }
  for (const [name, { kind, instances: keyed }] of all.keyedBulkheads) {
    keyed.sweepAll();
    let shown = 0;
    keyed.forEach((key, bulkhead) => {
      if (shown === max) return;
      shown++;
      instances.push(bulkheadEntry(name, key, bulkhead, kind.o.maxConcurrent));
    });
    if (keyed.size > shown) omitted.push({ kind: 'bulkhead', name, count: keyed.size - shown });
  }
  for (const [name, { kind, instances: keyed }] of all.keyedRateLimiters) {
    keyed.sweepAll();
    let shown = 0;
    keyed.forEach((key, limiter) => {
      if (shown === max) return;
      shown++;
      instances.push(rateLimiterEntry(name, key, limiter, kind.o.burst));
    });
    if (keyed.size > shown) omitted.push({ kind: 'rateLimiter', name, count: keyed.size - shown });
  }
  return { instances, omitted };
}
