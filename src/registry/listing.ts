import type { RegistryInstanceSnapshot } from '../policies/kinds.js';
import type { AnyPolicyKind } from '../protocol/kind.js';
import type { Keyed, RegistryInstances } from './instances.js';
import { pushNamed, snapshotEntry } from './snapshot.js';

/**
 * Bounded views of a registry for health endpoints, dashboards and metrics: a keyed
 * name may hold millions of keys, but only a few are shown one by one, so only those few get a
 * view; the others are read for their state and summed without building any object.
 */

/** Keyed instances of one kind and name left out of a listing. */
export interface OmittedKeys {
  readonly kind: string;
  readonly name: string;
  /** How many keys were left out. */
  readonly count: number;
}

/** @internal A keyed instance to show one by one. */
export interface ListedKey<P> {
  readonly key: string;
  /** The instance, or undefined for one shelved as {@link numbers}. */
  readonly instance: P | undefined;
  /** The numbers of a shelved instance, copied when it was met. */
  readonly numbers: Float64Array | undefined;
}

/** @internal What {@link listKeyed} found. */
export interface KeyedListing<P> {
  /**
   * At most `max` keys: those out of their kind's rest state, then the others, most recently
   * used first.
   */
  readonly shown: readonly ListedKey<P>[];
  /** Keys not shown. */
  readonly hidden: number;
}

/** @internal What {@link listKeyed} does with the keys it does not show, and what it meets. */
export interface ListingVisitor<P> {
  /** Skip shelved keys altogether (neither shown nor hidden). */
  readonly liveOnly?: boolean;
  /** Called for every key not shown: its instance, or its numbers when shelved. */
  hidden?(instance: P | undefined, store: Float64Array, at: number): void;
  /** Called for every key whose instance is out of its kind's rest state, shown or not. */
  outOfRest?(key: string, state: string): void;
}

/**
 * @internal The keys of a keyed name to show one by one: those out of their kind's rest state
 * first (a breaker that is not closed), then the most recently used. Views nothing: the
 * caller views what it shows; the others cost a read of their state (none for a shelved one,
 * which is at rest) and whatever `visit.hidden` does.
 */
export function listKeyed<P>(
  kind: AnyPolicyKind,
  { group, instances }: Keyed<P>,
  max: number,
  visit: ListingVisitor<P> = {},
): KeyedListing<P> {
  instances.sweepAll();
  const stride = group.stride;
  const stateOf = kind.state;
  const rest = kind.restState;
  const outOfRest: ListedKey<P>[] = [];
  const atRest: ListedKey<P>[] = [];
  let hidden = 0;
  instances.forEach((key, instance, store, at) => {
    if (instance === undefined) {
      if (visit.liveOnly) return;
      // Shelved: an instance at rest kept as numbers.
      if (atRest.length < max) {
        atRest.push({ key, instance, numbers: store.slice(at, at + stride) });
      } else {
        hidden++;
        visit.hidden?.(undefined, store, at);
      }
      return;
    }
    const state = stateOf === undefined ? undefined : stateOf(instance);
    if (state !== undefined && state !== rest) {
      visit.outOfRest?.(key, state);
      if (outOfRest.length < max) {
        outOfRest.push({ key, instance, numbers: undefined });
        return;
      }
    } else if (atRest.length < max) {
      atRest.push({ key, instance, numbers: undefined });
      return;
    }
    hidden++;
    visit.hidden?.(instance, store, at);
  });
  // Keys at rest met before `max` keys out of rest had been seen give way to them.
  const room = max - outOfRest.length;
  for (let i = room; i < atRest.length; i++) {
    hidden++;
    const { instance, numbers } = atRest[i]!;
    visit.hidden?.(instance, numbers ?? EMPTY, 0);
  }
  if (atRest.length > room) atRest.length = room;
  return { shown: outOfRest.concat(atRest), hidden };
}

const EMPTY = new Float64Array(0);

/** @internal What {@link limitedSnapshot} returns. */
export interface LimitedSnapshot {
  readonly instances: RegistryInstanceSnapshot[];
  readonly omitted: OmittedKeys[];
}

/**
 * @internal Every named instance and at most `max` keys of each keyed name (those out of their
 * kind's rest state first, then the most recently used), in the order of `Registry.snapshot`,
 * and the number of keys left out per name. Calls `outOfRest` for every instance out of its
 * kind's rest state, named or keyed, listed or not. Only the instances listed are viewed.
 */
export function limitedSnapshot(
  all: RegistryInstances,
  max: number,
  outOfRest?: (kind: AnyPolicyKind, name: string, key: string | undefined, state: string) => void,
): LimitedSnapshot {
  const instances: RegistryInstanceSnapshot[] = [];
  const omitted: OmittedKeys[] = [];
  pushNamed(all, instances);
  if (outOfRest !== undefined) {
    for (const { kind, named } of all) {
      if (kind.state === undefined) continue;
      for (const [name, { policy }] of named) {
        const state = kind.state(policy);
        if (state !== kind.restState) outOfRest(kind, name, undefined, state);
      }
    }
  }
  for (const { kind, keyed } of all) {
    for (const [name, group] of keyed) {
      const visit: ListingVisitor<object> =
        outOfRest === undefined
          ? {}
          : { outOfRest: (key, state) => outOfRest(kind, name, key, state) };
      const { shown, hidden } = listKeyed(kind, group, max, visit);
      for (const { key, instance, numbers } of shown) {
        instances.push(
          snapshotEntry(kind, name, key, group.group.view(instance, numbers ?? EMPTY, 0)),
        );
      }
      if (hidden > 0) omitted.push({ kind: kind.name, name, count: hidden });
    }
  }
  return { instances, omitted };
}
