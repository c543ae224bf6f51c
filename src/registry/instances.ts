import type { AnyPolicyKind, KeyedGroup } from '../protocol/kind.js';
import type { KeyedInstances } from './KeyedInstances.js';

/** @internal A named instance of a registry. */
export interface Named<P> {
  readonly policy: P;
  /** Built in code and handed to `register`: the config never changes it. */
  readonly registered: boolean;
}

/** @internal The keyed instances of one name: the group that builds them, and the keys. */
export interface Keyed<P = unknown> {
  readonly group: KeyedGroup<P, unknown, unknown>;
  readonly instances: KeyedInstances<P>;
}

/** @internal Every instance of one kind in a registry, named and keyed. */
export interface KindInstances {
  readonly kind: AnyPolicyKind;
  readonly named: Map<string, Named<object>>;
  readonly keyed: Map<string, Keyed<object>>;
}

/**
 * @internal Every instance of a registry, by kind in the order of its kinds: what
 * `collectMetrics`, the listings and the registry's own snapshot and reconfiguration read.
 */
export type RegistryInstances = readonly KindInstances[];
