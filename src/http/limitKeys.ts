import type { RegistryInstanceSnapshot } from '../registry/snapshot.js';

/** Keyed instances of one kind and name left out of a listing. */
export interface OmittedKeys {
  readonly kind: RegistryInstanceSnapshot['kind'];
  readonly name: string;
  /** How many keys were left out. */
  readonly count: number;
}

/** What {@link limitKeys} keeps and what it leaves out. */
export interface LimitedInstances {
  readonly instances: RegistryInstanceSnapshot[];
  readonly omitted: OmittedKeys[];
}

/**
 * @internal Keeps every named instance and at most `max` keys of each keyed kind and name:
 * breakers that are not closed first (an operator looks for those), then the others in the
 * snapshot's order (most recently used first).
 */
export function limitKeys(all: readonly RegistryInstanceSnapshot[], max: number): LimitedInstances {
  const instances: RegistryInstanceSnapshot[] = [];
  const groups = new Map<string, RegistryInstanceSnapshot[]>();
  for (const instance of all) {
    if (instance.key === undefined) {
      instances.push(instance);
      continue;
    }
    // The kind cannot contain a NUL, so no name can make two groups collide.
    const id = `${instance.kind}\u0000${instance.name}`;
    const group = groups.get(id);
    if (group === undefined) groups.set(id, [instance]);
    else group.push(instance);
  }
  const omitted: OmittedKeys[] = [];
  for (const group of groups.values()) {
    if (group.length <= max) {
      for (const instance of group) instances.push(instance);
      continue;
    }
    let kept = 0;
    for (const instance of group) {
      if (kept < max && isNotClosed(instance)) {
        instances.push(instance);
        kept++;
      }
    }
    for (const instance of group) {
      if (kept < max && !isNotClosed(instance)) {
        instances.push(instance);
        kept++;
      }
    }
    const { kind, name } = group[0]!;
    omitted.push({ kind, name, count: group.length - max });
  }
  return { instances, omitted };
}

function isNotClosed(instance: RegistryInstanceSnapshot): boolean {
  return instance.kind === 'circuitBreaker' && instance.state !== 'closed';
}
