import type { Clock } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { OptionsError, UsageError } from '../errors/OptionsError.js';
import type { Disposer } from '../events/Listeners.js';
import { KeyedStep } from '../pipeline/KeyedStep.js';
import { POLICY_KINDS, type RegistryTransition } from '../policies/kinds.js';
import {
  type KeyedKindName,
  LIBRARY_KINDS,
  type LibraryKindName,
  type LibraryKindTypes,
} from '../policies/kindTable.js';
import { brand, otherCopyNote } from '../protocol/brand.js';
import {
  type AnyPolicyKind,
  type KindHooks,
  type OptionsData,
  POLICY_KIND,
  type PolicyKindOf,
} from '../protocol/kind.js';
import { checkOptionsObject, clockOption, keyError } from '../validation/validate.js';
import type { ConfigError } from './ConfigError.js';
import {
  addCodeBuiltHome,
  buildHeld,
  type CodeBuiltHome,
  codeBuiltPolicies,
  markHeld,
} from './codeBuilt.js';
import { referencesOf } from './config/schema.js';
import type { RegistryConfig, ValidConfig } from './config/types.js';
import { optionsFor, readConfig, validateConfig } from './config/validate.js';
import type { KindInstances, Named, RegistryInstances } from './instances.js';
import { KeyedInstances } from './KeyedInstances.js';
import { checkKinds } from './kindsOption.js';
import { prepareReconfigure } from './reconfigure.js';
import { type RegistrySnapshot, registrySnapshot } from './snapshot.js';
import { TransitionLog } from './TransitionLog.js';

/** Options of a {@link Registry} itself (the policies' options come from the config). */
export interface RegistryOptions {
  /** The clock given to every policy the registry builds, and read for idle keys. */
  readonly clock?: Clock;
  /**
   * Policy kinds defined outside the library (see `PolicyKindDescriptor`), held by name and
   * key, read from config data (`defaults.<name>` and their `section`), listed in snapshots,
   * metrics and the dashboard like the library's own. Each needs a `name` and a `section`
   * no other kind uses. @default none
   */
  readonly kinds?: readonly AnyPolicyKind[];
  /**
   * Also list the named policies built in code and still referenced
   * (`circuitBreaker({ name: 'payments' })`, not a registry's) beside the registry's own, in
   * snapshots, metrics, `/health` and the dashboard. A policy without a `name` is never listed;
   * of two live ones of one kind and name, the one built last is; and a name the registry
   * holds itself shows the registry's instance. A breaker's state changes reach
   * `onStateChange` and `recentTransitions` (of the registry made last, when several list
   * them). Nothing keeps them alive: a policy nobody references is collected and leaves the
   * listings. The registry neither reconfigures nor disposes them.
   * @default false (`defaultRegistry` lists them)
   */
  readonly codeBuilt?: boolean;
}

/** Options of {@link Registry.keyed}. */
export interface KeyedStepOptions {
  /**
   * The key of the step's instance for a call, from the call's `key` (undefined when the call
   * gave none): a string of at most 1,024 characters. @default the call's key, required
   */
  readonly key?: (key: string | undefined) => string;
}

/**
 * Named and keyed policy instances built from config data, shared across a codebase.
 *
 * - `registry.circuitBreaker('payments')` returns the same breaker every time, built from
 *   `defaults.circuitBreaker` with `circuitBreakers.payments` on top (or the defaults alone for
 *   a name without an entry). Every library kind has its accessor (`retry`, `retryBudget`,
 *   `timeout`, `bulkhead`, `rateLimiter`, `loadShedder`, `adaptiveLimit`, `hedge`, `chaos`), and
 *   `get(kind, name)` serves any kind; each kind has its own names.
 * - `registry.keyedCircuitBreaker('api', host)` gives each key its own breaker, built from the
 *   config of name `api` on first use. Each keyed name keeps at most `keys.maxKeys` keys: the
 *   least recently used is evicted to make room, a key unused for `keys.idleTimeout` is dropped,
 *   and evicted instances are disposed. Open and half-open breakers (and breakers set to a state
 *   by hand), bulkheads with calls in flight or queued, and rate limiters with callers waiting
 *   or permits taken that are not free again yet are never evicted, except a half-open breaker
 *   that nobody has called since its break ended, for `keys.idleTimeout` (it refuses nobody, and
 *   goes like an idle closed one). When the cap is reached and the 64 least recently used keys
 *   are all protected, the new key is added over the cap, and later uses get back under it as
 *   keys become evictable; at `keys.hardMaxKeys` (default 2 × `maxKeys`) the least recently
 *   used open and half-open breakers are evicted too, so keys that fail cannot hold memory
 *   without bound. No timer is involved: the work is done a few keys at a time on each
 *   use.
 * - An idle keyed instance may be kept as a few numbers instead of an object (a closed breaker
 *   with nothing but successes in its window, an idle bulkhead or rate limiter) and rebuilt with
 *   the same state on its next use (an idle rate limiter's counters start again from zero), so
 *   a million idle keys cost about a hundred bytes each. So ask the registry for a keyed
 *   instance each time it is used rather than keeping it (a pipeline's keyed step,
 *   {@link keyed}, does): a kept one may have been replaced by then. Outcomes of calls still in flight on a replaced breaker are passed on to the key's
 *   current breaker.
 * - `reconfigure(config)` applies new settings to the calls to come without losing breaker
 *   state or permits in flight, or changes nothing when any of it is invalid.
 *
 * @example
 * ```ts
 * const registry = new Registry(JSON.parse(await readFile('resilience.json', 'utf8')));
 * const p = pipeline(registry.retry('payments'), registry.circuitBreaker('payments'));
 * const perHost = pipeline(registry.keyed('circuitBreaker', 'api')); // execute(fn, { key: host })
 * ```
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the accessors are installed on the prototype, typed by the interface of the same name.
export class Registry {
  private config: ValidConfig;
  private readonly clock: Clock;
  /** Every kind's instances, by kind name, in the order of the kinds. */
  private readonly byKind: ReadonlyMap<string, KindInstances>;
  private readonly all: RegistryInstances;
  private readonly transitions = new TransitionLog();
  private readonly hooks: KindHooks;
  /**
   * With the `codeBuilt` option: connects the policies built in code to this registry (kept
   * here, held weakly by the view of them).
   */
  private readonly codeBuiltHome: CodeBuiltHome | undefined;

  /**
   * @param config settings as plain data (see {@link RegistryConfig}); throws
   *   {@link ConfigError} listing every problem when it is invalid.
   */
  constructor(config?: RegistryConfig, options?: RegistryOptions) {
    const o = checkOptionsObject(options, ['clock', 'kinds', 'codeBuilt'], '');
    this.clock = clockOption(o.clock, 'clock', systemClock);
    if (o.codeBuilt !== undefined && typeof o.codeBuilt !== 'boolean') {
      throw new OptionsError('codeBuilt', o.codeBuilt, 'a boolean');
    }
    const kinds = [...POLICY_KINDS, ...checkKinds(o.kinds, POLICY_KINDS)];
    this.all = kinds.map((kind) => ({ kind, named: new Map(), keyed: new Map() }));
    this.byKind = new Map(this.all.map((k) => [k.kind.name, k]));
    const transitions = this.transitions;
    this.hooks = {
      stateChange: (name, key, event) => transitions.record(name, key, event as never),
    };
    this.config = validateConfig(config, kinds);
    if (o.codeBuilt === true) {
      const home: CodeBuiltHome = {
        adopt: (kind, name, policy) => {
          const k = this.byKind.get(kind) ?? this.carriedKind(policy);
          // A name the registry holds shows the registry's instance: its transitions alone.
          if (k === undefined || k.named.has(name) || !k.kind.is(policy)) return;
          k.kind.attach?.(policy, name, this.hooks);
        },
      };
      this.codeBuiltHome = home;
      addCodeBuiltHome(home);
    }
  }

  /**
   * The instance of `kind` named `name`: the same instance on every call, built from
   * `defaults.<kind>` with its entry in the kind's section on top (or the defaults alone for a
   * name without an entry). `kind` is a kind's descriptor or its name (`'circuitBreaker'`);
   * throws {@link UsageError} for a kind the registry was not given.
   *
   * @example
   * ```ts
   * const breaker = registry.get(circuitBreakerKind, 'payments'); // registry.circuitBreaker('payments')
   * ```
   */
  get<P extends object>(kind: PolicyKindOf<P> | string, name: string): P {
    return this.named(this.kindInstances(kind), name) as P;
  }

  /**
   * The instance of `kind` for `key` under name `name` (one per downstream host, tenant, ...),
   * built from the config of `name` on first use. Ask for it on each use rather than keeping
   * it: an idle one may be evicted, or rebuilt from its numbers (see the class description).
   * Throws {@link OptionsError} when `key` is not a string of at most 1,024 characters: keys
   * usually come from traffic, and one huge key would make every listing of the registry
   * (health, metrics, dashboard) as large; {@link UsageError} for a kind the registry was not
   * given or that is not kept per key.
   */
  getKeyed<P extends object>(kind: PolicyKindOf<P> | string, name: string, key: string): P {
    return this.keyedInstance(this.kindInstances(kind), name, key) as P;
  }

  /**
   * A step for `pipeline(...)` that stands for the instances of `kind` kept per key under
   * `name`: each call through the pipeline uses the current instance of its key, found through
   * the registry when the call starts (made on first use, never one the registry has evicted),
   * as {@link getKeyed} finds it. The key is the call's (`execute(fn, { key })`), or what the
   * `key` function makes of it (it gets the call's key, undefined when the call gave none).
   * `kind` is a descriptor or a kind's name, of a kind kept per key (circuit breakers,
   * bulkheads, rate limiters, kinds of your own with a keyed group).
   *
   * Throws {@link UsageError} for a kind the registry was not given or that is not kept per
   * key, {@link OptionsError} for an empty name or a `key` that is not a function, and
   * {@link ConfigError} when the config of `name` cannot build an instance.
   *
   * @example
   * ```ts
   * const api = pipeline(retry(), registry.keyed('circuitBreaker', 'api'), timeout('2s'));
   * await api.execute(({ signal }) => fetch(url, { signal }), { key: new URL(url).host });
   *
   * // The key computed from the call's: one rate limiter per tenant of a `tenant:user` key.
   * const perTenant = registry.keyed('rateLimiter', 'tenants', {
   *   key: (key) => key?.split(':')[0] ?? 'anonymous',
   * });
   * ```
   */
  keyed<P extends object>(
    kind: PolicyKindOf<P> | string,
    name: string,
    options?: KeyedStepOptions,
  ): KeyedStep<P> {
    const k = this.kindInstances(kind);
    checkName(name);
    const o = checkOptionsObject(options, ['key'], '');
    const keyOf = o.key;
    if (keyOf !== undefined && typeof keyOf !== 'function') {
      throw new OptionsError('key', keyOf, "a function of the call's key returning a string");
    }
    // Made now, so that a name the config cannot build fails here rather than on a call.
    if (!k.keyed.has(name)) this.keyedGroup(k, name);
    return new KeyedStep<P>(
      k.kind.name,
      k.kind.label,
      name,
      (key) => this.keyedInstance(k, name, key) as P,
      keyOf as KeyedStepOptions['key'],
    );
  }

  /**
   * Adds an instance built in code (with predicates, say) under `name`; the named accessor of
   * its kind returns it from then on. The config never changes it, but `dispose` disposes it.
   * Throws {@link UsageError} when its kind already has an instance of that name.
   */
  register(name: string, policy: object): void {
    checkName(name);
    const k = this.kindFor(policy);
    if (k === undefined) {
      throw new OptionsError(
        'policy',
        policy,
        `a policy of a kind the registry holds (${this.all.map(({ kind }) => kind.label).join(', ')})${otherCopyNote(policy)}`,
      );
    }
    if (k.named.has(name)) {
      throw new UsageError(
        `The registry already has a ${k.kind.label} named ${JSON.stringify(name)}`,
      );
    }
    k.named.set(name, { policy, registered: true });
    markHeld(policy);
    k.kind.attach?.(policy, name, this.hooks);
  }

  /** The instances of the kind `policy` is of: a kind the registry holds, or one it carries. */
  private kindFor(policy: object): KindInstances | undefined {
    return this.all.find(({ kind }) => kind.is(policy)) ?? this.carriedKind(policy);
  }

  /**
   * The instances of the kind `policy` carries under {@link POLICY_KIND}, which the registry
   * takes on from now on like one given in `kinds` (checked the same way); undefined when it
   * carries none that claims it, or one whose name another kind of the registry has.
   */
  private carriedKind(policy: object): KindInstances | undefined {
    const carried = (policy as { [POLICY_KIND]?: unknown })[POLICY_KIND];
    if (carried === undefined) return undefined;
    const held = this.all.find(({ kind }) => kind === carried);
    if (held !== undefined) return held;
    let kind: AnyPolicyKind;
    try {
      [kind] = checkKinds(
        [carried],
        this.all.map((k) => k.kind),
      ) as [AnyPolicyKind];
    } catch {
      return undefined;
    }
    if (!kind.is(policy)) return undefined;
    const k: KindInstances = { kind, named: new Map(), keyed: new Map() };
    (this.all as KindInstances[]).push(k);
    (this.byKind as Map<string, KindInstances>).set(kind.name, k);
    return k;
  }

  /**
   * The last state changes (at most 100, oldest first) of every breaker of the registry,
   * named and keyed, for dashboards and logs.
   */
  recentTransitions(): readonly RegistryTransition[] {
    return this.transitions.recent();
  }

  /**
   * Calls `listener` on every state change of every breaker of the registry, named and keyed
   * (including keyed ones built later), without keeping idle keyed breakers from being shelved
   * as numbers. Returns a function that unsubscribes it.
   *
   * @example
   * ```ts
   * registry.onStateChange((t) => log.warn(`${t.name} ${t.key ?? ''}: ${t.from} -> ${t.to}`));
   * ```
   */
  onStateChange(listener: (transition: RegistryTransition) => void): Disposer {
    return this.transitions.listen(listener);
  }

  /**
   * Every instance (named ones, then keyed ones, most recently used first), with its state
   * and counters, as plain JSON-serializable data; with the `codeBuilt` option (as for
   * `defaultRegistry`), the live named policies built in code after the named ones of their
   * kind. Keys past their idle timeout are dropped first.
   */
  snapshot(): RegistrySnapshot {
    return registrySnapshot(this.instancesForMetrics());
  }

  /**
   * Applies new settings to every instance built from the config (not to registered ones) and
   * to the keyed limits, for the calls to come: breakers keep their state, bulkheads their
   * permits in flight and their queue, rate limiters the permits taken and the turns reserved
   * (see each policy's `reconfigure`). Everything is checked first: when the data is invalid,
   * or a setting cannot apply to an instance in use (slow-call tracking turned on for a
   * breaker built without it, a queue given to a bulkhead built without one, a timeout's
   * strategy changed, a rate limiter's `maxWait` turned from 0 to more or back), it throws {@link ConfigError} listing
   * every problem and changes nothing. Keyed instances that cannot take the new settings are
   * dropped and rebuilt on their next use when they are not protected.
   */
  reconfigure(config: RegistryConfig): void {
    const { config: next, issues } = readConfig(
      config,
      this.all.map((k) => k.kind),
    );
    const apply = prepareReconfigure(
      this.all,
      next,
      (kind, name) => this.options(next, kind, name),
      this.clock,
      issues,
    );
    this.config = next;
    apply();
  }

  /**
   * Disposes every instance (registered ones included: pending retry delays and queue waits
   * end with a `UsageError`, timers are cancelled) and forgets them all. The registry stays
   * usable: later calls build new instances from the same config.
   */
  dispose(): void {
    for (const { kind, named, keyed } of this.all) {
      for (const { policy } of named.values()) kind.dispose(policy);
      named.clear();
      for (const { instances } of keyed.values()) instances.clear();
      keyed.clear();
    }
    this.transitions.clear();
  }

  /**
   * @internal Every instance, by kind, for metric collection (see `collectMetrics`) and the
   * bounded listings of `/health` and the dashboard: with the `codeBuilt` option, the live
   * named policies built in code too, after the registry's own named instances of their kind.
   */
  instancesForMetrics(): RegistryInstances {
    return this.codeBuiltHome === undefined ? this.all : withCodeBuilt(this.all);
  }

  // ---- internals --------------------------------------------------------------------------------

  private kindInstances(kind: AnyPolicyKind | string): KindInstances {
    const name = typeof kind === 'string' ? kind : kind?.name;
    const k = this.byKind.get(name as string);
    if (k === undefined || (typeof kind !== 'string' && k.kind !== kind)) {
      throw new UsageError(
        `The registry holds no policy kind ${typeof name === 'string' ? JSON.stringify(name) : String(kind)}: give a kind defined outside the library to \`new Registry(config, { kinds: [...] })\``,
      );
    }
    return k;
  }

  private named(k: KindInstances, name: string): object {
    let entry = k.named.get(name);
    if (entry === undefined) {
      const options = this.options(this.config, k.kind, name);
      const policy = buildHeld(() => k.kind.create(options));
      k.kind.attach?.(policy, name, this.hooks);
      entry = { policy, registered: false };
      k.named.set(name, entry);
    }
    return entry.policy;
  }

  private keyedInstance(k: KindInstances, name: string, key: string): object {
    const invalid = keyError(key);
    if (invalid !== undefined) throw invalid;
    const keyed = k.keyed.get(name) ?? this.keyedGroup(k, name);
    return keyed.instances.get(key);
  }

  /** Options for instance `name` of `kind` under `config`, with the name and the clock. */
  private options(config: ValidConfig, kind: AnyPolicyKind, name: string): OptionsData {
    checkName(name);
    const data: OptionsData = { ...optionsFor(config, kind, name), name, clock: this.clock };
    // An option naming an instance of another kind gets that instance, shared by all who name it.
    for (const [key, target] of referencesOf(kind.config.schema)) {
      const instance = data[key];
      if (typeof instance === 'string')
        data[key] = this.named(this.kindInstances(target), instance);
    }
    return data;
  }

  private keyedGroup(k: KindInstances, name: string) {
    const { kind } = k;
    if (kind.keyed === undefined) {
      throw new UsageError(`A ${kind.label} is not kept per key: ask for it by name`);
    }
    const group = kind.keyed(name, kind.resolve(this.options(this.config, kind, name)), this.hooks);
    const { maxKeys, idleTimeout, hardMaxKeys } = this.config.keys;
    const instances = new KeyedInstances(group, this.clock, maxKeys, idleTimeout, hardMaxKeys);
    group.instances = instances;
    const keyed = { group, instances };
    k.keyed.set(name, keyed);
    return keyed;
  }
}

/**
 * `all` with the live named policies built in code added to each kind's named instances (a
 * new listing, read once by the caller), or `all` itself when there are none. A name the
 * registry holds keeps its own instance.
 */
function withCodeBuilt(all: RegistryInstances): RegistryInstances {
  const byKind = codeBuiltPolicies();
  if (byKind.size === 0) return all;
  let out: KindInstances[] | undefined;
  for (const [i, k] of all.entries()) {
    const found = byKind.get(k.kind.name);
    if (found === undefined) continue;
    let named: Map<string, Named<object>> | undefined;
    for (const [name, policy] of found) {
      if (k.named.has(name) || !k.kind.is(policy)) continue;
      named ??= new Map(k.named);
      named.set(name, { policy, registered: true });
    }
    if (named === undefined) continue;
    out ??= [...all];
    out[i] = { kind: k.kind, named, keyed: k.keyed };
  }
  return out ?? all;
}

function checkName(name: unknown): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new OptionsError('name', name, 'a non-empty string');
  }
}

/**
 * A registry for code that does not need an isolated one. Configure it from data with
 * `defaultRegistry.reconfigure(config)`; tests and multi-tenant applications should make
 * their own `new Registry(config)` instead. It lists the named policies built in code (option
 * `codeBuilt`), so the exporters and `breakwater/observability`, which read it when given no registry,
 * show them without registration.
 */
export const defaultRegistry: Registry = /* @__PURE__ */ new Registry(undefined, {
  codeBuilt: true,
});

brand(Registry, 'Registry');

/**
 * The typed accessors of the library's kinds: `registry.circuitBreaker(name)` for each kind
 * (`registry.get(kind, name)`), and `registry.keyedCircuitBreaker(name, key)` for each kind kept
 * per key (`registry.getKeyed(kind, name, key)`). Timeouts and rate limiters throw
 * {@link ConfigError} when the config gives `name` no timeout or no rate.
 */
type RegistryAccessors = {
  readonly [K in LibraryKindName]: (name: string) => LibraryKindTypes[K]['policy'];
} & {
  readonly [K in KeyedKindName as `keyed${Capitalize<K>}`]: (
    name: string,
    key: string,
  ) => LibraryKindTypes[K]['policy'];
};

export interface Registry extends RegistryAccessors {}

for (const [name, { kind }] of Object.entries(LIBRARY_KINDS) as [
  string,
  { kind: AnyPolicyKind },
][]) {
  const accessor = (key: string, value: (this: Registry, ...args: string[]) => object) =>
    Object.defineProperty(Registry.prototype, key, { configurable: true, writable: true, value });
  accessor(name, function (n) {
    return this.get(kind, n!);
  });
  if (kind.keyed !== undefined) {
    accessor(`keyed${name[0]!.toUpperCase()}${name.slice(1)}`, function (n, key) {
      return this.getKeyed(kind, n!, key!);
    });
  }
}
