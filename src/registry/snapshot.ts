import type { RegistryInstanceSnapshot } from '../policies/kinds.js';
import type { AnyPolicyKind, InstanceView } from '../protocol/kind.js';
import type { RegistryInstances } from './instances.js';

/**
 * Every instance of a registry (named ones first, then keyed ones, most recently used first)
 * with its state and counters, as plain data for health endpoints and dashboards.
 */
export interface RegistrySnapshot {
  readonly instances: readonly RegistryInstanceSnapshot[];
}

/** @internal The snapshot entry of one instance. */
export function snapshotEntry(
  kind: AnyPolicyKind,
  name: string,
  key: string | undefined,
  view: InstanceView,
): RegistryInstanceSnapshot {
  const entry: { kind: string; name: string; state?: string; stats: object; key?: string } =
    view.state === undefined
      ? { kind: kind.name, name, stats: view.stats }
      : { kind: kind.name, name, state: view.state, stats: view.stats };
  if (key !== undefined) entry.key = key;
  // Typed as the library's kinds; a kind given to the registry appears under its own name.
  return entry as RegistryInstanceSnapshot;
}

/** @internal Pushes the entries of every named instance of `all`, kind by kind. */
export function pushNamed(all: RegistryInstances, out: RegistryInstanceSnapshot[]): void {
  for (const { kind, named } of all) {
    for (const [name, { policy }] of named)
      out.push(snapshotEntry(kind, name, undefined, kind.view(policy)));
  }
}

/**
 * @internal The snapshot of every instance of a registry (see `Registry.snapshot`). Keys past
 * their idle timeout are dropped first.
 */
export function registrySnapshot(all: RegistryInstances): RegistrySnapshot {
  const instances: RegistryInstanceSnapshot[] = [];
  pushNamed(all, instances);
  for (const { kind, keyed } of all) {
    for (const [name, { group, instances: keys }] of keyed) {
      keys.sweepAll();
      keys.forEach((key, instance, store, at) => {
        instances.push(snapshotEntry(kind, name, key, group.view(instance, store, at)));
      });
    }
  }
  return { instances };
}
