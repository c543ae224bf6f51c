import { setCodeBuiltSink } from '../telemetry/codeBuilt.js';

/**
 * @internal The process-wide view of named policies built in code (`circuitBreaker({ name })`),
 * which `defaultRegistry` lists beside its own instances so that `/health`, `/metrics` and the
 * dashboard show them without hand registration (as prom-client's default register holds the
 * metrics made without one).
 *
 * Held weakly: a policy nobody references is collected and leaves the view. Each kind and name
 * keeps one entry, the policy built last under that name (a breaker rebuilt with new settings
 * replaces the old one at once), so the view holds at most one entry per name in use, plus dead
 * entries swept as the view grows. Policies built by a registry are not noted (the registry
 * lists them), and those handed to `Registry.register` are skipped. Policies reach it through
 * `telemetry/codeBuilt.ts` once a registry listing them exists (`defaultRegistry` is made
 * when this module loads), so a program of policies alone does not carry it.
 */

/** Live entries by kind name, then by policy name. */
const byKind = new Map<string, Map<string, WeakRef<object>>>();
/** Policies a registry holds: listed by it, never as built in code. */
const held = new WeakSet<object>();
let entries = 0;
/** Entries after which dead ones are swept: twice the live count at the last sweep, 64 at least. */
let sweepAt = 64;
/** Above 0 while a registry builds an instance. */
let registryBuilding = 0;

/** @internal A registry that lists the policies built in code: it connects each one built. */
export interface CodeBuiltHome {
  /** Connects `policy`, of kind `kind`, built in code under `name` (its state changes). */
  adopt(kind: string, name: string, policy: object): void;
}

/** Held weakly: a registry nobody references goes, and its entry with the next policy noted. */
const homes = new Set<WeakRef<CodeBuiltHome>>();

/** Notes `policy`, of kind `kind`, built in code under `name`: a WeakRef and a map entry. */
function note(kind: string, name: string, policy: object): void {
  if (registryBuilding > 0) return;
  let names = byKind.get(kind);
  if (names === undefined) byKind.set(kind, (names = new Map()));
  const size = names.size;
  names.set(name, new WeakRef(policy));
  if (names.size > size && ++entries >= sweepAt) sweep();
  for (const ref of homes) {
    const home = ref.deref();
    if (home === undefined) homes.delete(ref);
    else home.adopt(kind, name, policy);
  }
}

/**
 * @internal Adds a registry that lists the policies built in code: `home` adopts the live ones
 * now and each one built from now on, while it lives.
 */
export function addCodeBuiltHome(home: CodeBuiltHome): void {
  if (homes.size === 0) setCodeBuiltSink(note);
  homes.add(new WeakRef(home));
  for (const [kind, live] of codeBuiltPolicies()) {
    for (const [name, policy] of live) home.adopt(kind, name, policy);
  }
}

/**
 * Drops the entries whose policy was collected, so that names used once do not pile up: run
 * when the entries double, and by every listing.
 */
function sweep(): void {
  codeBuiltPolicies();
}

/** @internal Builds a registry's instance: `build` runs without noting what it builds. */
export function buildHeld<T>(build: () => T): T {
  registryBuilding++;
  try {
    return build();
  } finally {
    registryBuilding--;
  }
}

/** @internal Marks `policy` as held by a registry (`register`): it is no longer listed here. */
export function markHeld(policy: object): void {
  held.add(policy);
}

/**
 * @internal The live named policies built in code, by kind name, each kind's name by name in
 * the order the names were first used, without those a registry holds. Read at listing time:
 * drops the entries of collected policies on the way.
 */
export function codeBuiltPolicies(): ReadonlyMap<
  string,
  readonly [name: string, policy: object][]
> {
  const out = new Map<string, [string, object][]>();
  entries = 0;
  for (const [kind, names] of byKind) {
    const live: [string, object][] = [];
    for (const [name, ref] of names) {
      const policy = ref.deref();
      if (policy === undefined) {
        names.delete(name);
        continue;
      }
      entries++;
      if (!held.has(policy)) live.push([name, policy]);
    }
    if (live.length > 0) out.set(kind, live);
  }
  sweepAt = Math.max(64, entries * 2);
  return out;
}

/** @internal Entries held now, dead ones not swept yet included (for tests of the bound). */
export function codeBuiltEntries(): number {
  let n = 0;
  for (const names of byKind.values()) n += names.size;
  return n;
}
