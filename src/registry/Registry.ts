import type { Clock } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { OptionsError, UsageError } from '../errors/OptionsError.js';
import type { Disposer } from '../events/Listeners.js';
import { Bulkhead } from '../policies/bulkhead/Bulkhead.js';
import { type BulkheadOptions, resolveBulkheadOptions } from '../policies/bulkhead/options.js';
import { CircuitBreaker, type TransitionSink } from '../policies/circuit-breaker/CircuitBreaker.js';
import {
  type CircuitBreakerOptions,
  resolveBreakerOptions,
} from '../policies/circuit-breaker/options.js';
import {
  type RateLimiterOptions,
  resolveRateLimiterOptions,
} from '../policies/rate-limiter/options.js';
import { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import type { RetryOptions } from '../policies/retry/options.js';
import { Retry } from '../policies/retry/Retry.js';
import { brand, otherCopyNote } from '../policies/shared/brand.js';
import type { TimeoutOptions } from '../policies/timeout/options.js';
import { Timeout } from '../policies/timeout/Timeout.js';
import { checkOptionsObject, clockOption, keyError } from '../validation/validate.js';
import type { ConfigError } from './ConfigError.js';
import type { OptionsData, RegistryConfig, RegistryKind, ValidConfig } from './config/types.js';
import { optionsFor, validateConfig } from './config/validate.js';
import { KeyedInstances } from './KeyedInstances.js';
import { BreakerKind, BulkheadKind, type Keyed, RateLimiterKind } from './kinds.js';
import { prepareReconfigure } from './reconfigure.js';
import { type RegistrySnapshot, registrySnapshot } from './snapshot.js';
import { type RegistryTransition, TransitionLog } from './TransitionLog.js';

/** Options of a {@link Registry} itself (the policies' options come from the config). */
export interface RegistryOptions {
  /** The clock given to every policy the registry builds, and read for idle keys. */
  readonly clock?: Clock;
}

/**
 * @internal Every instance of a registry: what `collectMetrics`, the listings and the
 * registry's own snapshot and reconfiguration read.
 */
export interface RegistryInstances {
  readonly breakers: ReadonlyMap<string, Named<CircuitBreaker>>;
  readonly retries: ReadonlyMap<string, Named<Retry>>;
  readonly timeouts: ReadonlyMap<string, Named<Timeout>>;
  readonly bulkheads: ReadonlyMap<string, Named<Bulkhead>>;
  readonly rateLimiters: ReadonlyMap<string, Named<RateLimiter>>;
  readonly keyedBreakers: ReadonlyMap<string, Keyed<CircuitBreaker, BreakerKind>>;
  readonly keyedBulkheads: ReadonlyMap<string, Keyed<Bulkhead, BulkheadKind>>;
  readonly keyedRateLimiters: ReadonlyMap<string, Keyed<RateLimiter, RateLimiterKind>>;
}

/** A policy a registry can hold. */
export type RegistryPolicy = CircuitBreaker | Retry | Timeout | Bulkhead | RateLimiter;

/** @internal A named instance of a registry. */
export interface Named<P> {
  readonly policy: P;
  /** Built in code and handed to `register`: the config never changes it. */
  readonly registered: boolean;
}

/**
 * Named and keyed policy instances built from config data, shared across a codebase.
 *
 * - `registry.circuitBreaker('payments')` returns the same breaker every time, built from
 *   `defaults.circuitBreaker` with `circuitBreakers.payments` on top (or the defaults alone for
 *   a name without an entry). Likewise `retry`, `timeout`, `bulkhead` and `rateLimiter`; each
 *   kind has its own names.
 * - `registry.keyedCircuitBreaker('api', host)` gives each key its own breaker, built from the
 *   config of name `api` on first use. Each keyed name keeps at most `keys.maxKeys` keys: the
 *   least recently used is evicted to make room, a key unused for `keys.idleTimeout` is dropped,
 *   and evicted instances are disposed. Open and half-open breakers (and breakers set to a state
 *   by hand), bulkheads with calls in flight or queued, and rate limiters with callers waiting
 *   or permits taken that are not free again yet are never evicted, except a half-open breaker
 *   that nobody has called since its break ended, for `keys.idleTimeout` (it refuses nobody, and
 *   goes like an idle closed one). When the cap is reached and the 64 least recently used keys
 *   are all protected, the new key is added over the cap, and later uses get back under it as
 *   keys become evictable. No timer is involved: the work is done a few keys at a time on each
 *   use.
 * - An idle keyed instance may be kept as a few numbers instead of an object (a closed breaker
 *   with nothing but successes in its window, an idle bulkhead or rate limiter) and rebuilt with
 *   the same state on its next use (an idle rate limiter's counters start again from zero), so
 *   a million idle keys cost about a hundred bytes each. So ask the registry for a keyed
 *   instance each time it is used rather than keeping it: a kept one may have been replaced by
 *   then. Outcomes of calls still in flight on a replaced breaker are passed on to the key's
 *   current breaker.
 * - `reconfigure(config)` applies new settings to the calls to come without losing breaker
 *   state or permits in flight, or changes nothing when any of it is invalid.
 *
 * @example
 * ```ts
 * const registry = new Registry(JSON.parse(await readFile('resilience.json', 'utf8')));
 * const p = pipeline(registry.retry('payments'), registry.circuitBreaker('payments'));
 * const perHost = (host: string) => pipeline(registry.keyedCircuitBreaker('api', host));
 * ```
 */
export class Registry {
  private config: ValidConfig;
  private readonly clock: Clock;
  private readonly breakers = new Map<string, Named<CircuitBreaker>>();
  private readonly retries = new Map<string, Named<Retry>>();
  private readonly timeouts = new Map<string, Named<Timeout>>();
  private readonly bulkheads = new Map<string, Named<Bulkhead>>();
  private readonly rateLimiters = new Map<string, Named<RateLimiter>>();
  private readonly keyedBreakers = new Map<string, Keyed<CircuitBreaker, BreakerKind>>();
  private readonly keyedBulkheads = new Map<string, Keyed<Bulkhead, BulkheadKind>>();
  private readonly keyedRateLimiters = new Map<string, Keyed<RateLimiter, RateLimiterKind>>();
  private readonly transitions = new TransitionLog();

  /**
   * @param config settings as plain data (see {@link RegistryConfig}); throws
   *   {@link ConfigError} listing every problem when it is invalid.
   */
  constructor(config?: RegistryConfig, options?: RegistryOptions) {
    const o = checkOptionsObject(options, ['clock'], '');
    this.clock = clockOption(o.clock, 'clock', systemClock);
    this.config = validateConfig(config);
  }

  /** The circuit breaker named `name`: the same instance on every call. */
  circuitBreaker(name: string): CircuitBreaker {
    let entry = this.breakers.get(name);
    if (entry === undefined) {
      const options = this.options(this.config, 'circuitBreaker', name);
      entry = { policy: new CircuitBreaker(options as CircuitBreakerOptions), registered: false };
      entry.policy.transitionSink = this.sinkFor(name);
      this.breakers.set(name, entry);
    }
    return entry.policy;
  }

  /** The retry policy named `name`: the same instance on every call. */
  retry(name: string): Retry {
    let entry = this.retries.get(name);
    if (entry === undefined) {
      const options = this.options(this.config, 'retry', name);
      entry = { policy: new Retry(options as RetryOptions), registered: false };
      this.retries.set(name, entry);
    }
    return entry.policy;
  }

  /**
   * The timeout policy named `name`: the same instance on every call. Throws
   * {@link ConfigError} when neither `timeouts[name]` nor `defaults.timeout` gives a timeout.
   */
  timeout(name: string): Timeout {
    let entry = this.timeouts.get(name);
    if (entry === undefined) {
      const options = this.options(this.config, 'timeout', name);
      entry = {
        policy: new Timeout(options as unknown as TimeoutOptions),
        registered: false,
      };
      this.timeouts.set(name, entry);
    }
    return entry.policy;
  }

  /** The bulkhead named `name`: the same instance on every call. */
  bulkhead(name: string): Bulkhead {
    let entry = this.bulkheads.get(name);
    if (entry === undefined) {
      const options = this.options(this.config, 'bulkhead', name);
      entry = { policy: new Bulkhead(options as BulkheadOptions), registered: false };
      this.bulkheads.set(name, entry);
    }
    return entry.policy;
  }

  /**
   * The rate limiter named `name`: the same instance on every call. Throws
   * {@link ConfigError} when neither `rateLimiters[name]` nor `defaults.rateLimiter` gives a
   * rate (`limit`, or `capacity` and `refillRate`).
   */
  rateLimiter(name: string): RateLimiter {
    let entry = this.rateLimiters.get(name);
    if (entry === undefined) {
      const options = this.options(this.config, 'rateLimiter', name);
      entry = { policy: new RateLimiter(options as RateLimiterOptions), registered: false };
      this.rateLimiters.set(name, entry);
    }
    return entry.policy;
  }

  /**
   * Adds an instance built in code (with predicates, say) under `name`; the named accessor of
   * its kind returns it from then on. The config never changes it, but `dispose` disposes it.
   * Throws {@link UsageError} when its kind already has an instance of that name.
   */
  register(name: string, policy: RegistryPolicy): void {
    checkName(name);
    const map =
      policy instanceof CircuitBreaker
        ? this.breakers
        : policy instanceof Retry
          ? this.retries
          : policy instanceof Timeout
            ? this.timeouts
            : policy instanceof Bulkhead
              ? this.bulkheads
              : policy instanceof RateLimiter
                ? this.rateLimiters
                : undefined;
    if (map === undefined) {
      throw new OptionsError(
        'policy',
        policy,
        `a CircuitBreaker, Retry, Timeout, Bulkhead or RateLimiter${otherCopyNote(policy)}`,
      );
    }
    if (map.has(name)) {
      const kind =
        map === this.breakers
          ? 'circuit breaker'
          : map === this.retries
            ? 'retry policy'
            : map === this.timeouts
              ? 'timeout'
              : map === this.bulkheads
                ? 'bulkhead'
                : 'rate limiter';
      throw new UsageError(`The registry already has a ${kind} named ${JSON.stringify(name)}`);
    }
    (map as Map<string, Named<RegistryPolicy>>).set(name, { policy, registered: true });
    // A breaker registered in several registries reports its transitions to the last one.
    if (policy instanceof CircuitBreaker) policy.transitionSink = this.sinkFor(name);
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

  private sinkFor(name: string): TransitionSink {
    return (_breaker, event) => this.transitions.record(name, undefined, event);
  }

  /**
   * The breaker of `key` under name `name` (one per downstream host, tenant, ...), built from
   * the config of `name` on first use. Ask for it on each use rather than keeping it: an idle
   * one may be evicted, or rebuilt from its numbers (see the class description). Throws
   * {@link OptionsError} when `key` is not a string of at most 1,024 characters: keys
   * usually come from traffic, and one huge key would make every listing of the registry
   * (health, metrics, dashboard) as large.
   */
  keyedCircuitBreaker(name: string, key: string): CircuitBreaker {
    const invalid = keyError(key);
    if (invalid !== undefined) throw invalid;
    const group = this.keyedBreakers.get(name) ?? this.keyedBreakerGroup(name);
    return group.instances.get(key);
  }

  /** The bulkhead of `key` under name `name`, like {@link keyedCircuitBreaker}. */
  keyedBulkhead(name: string, key: string): Bulkhead {
    const invalid = keyError(key);
    if (invalid !== undefined) throw invalid;
    const group = this.keyedBulkheads.get(name) ?? this.keyedBulkheadGroup(name);
    return group.instances.get(key);
  }

  /**
   * The rate limiter of `key` under name `name` (one per client, tenant, ...), like
   * {@link keyedCircuitBreaker}. Throws {@link ConfigError} when the config gives `name` no
   * rate.
   */
  keyedRateLimiter(name: string, key: string): RateLimiter {
    const invalid = keyError(key);
    if (invalid !== undefined) throw invalid;
    const group = this.keyedRateLimiters.get(name) ?? this.keyedRateLimiterGroup(name);
    return group.instances.get(key);
  }

  /**
   * Every instance (named ones, then keyed ones, most recently used first), with its state
   * and counters, as plain JSON-serializable data. Keys past their idle timeout are dropped
   * first.
   */
  snapshot(): RegistrySnapshot {
    return registrySnapshot(this.all());
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
    const next = validateConfig(config);
    const apply = prepareReconfigure(
      this.all(),
      next,
      (kind, name) => this.options(next, kind, name),
      this.clock,
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
    for (const map of [
      this.breakers,
      this.retries,
      this.timeouts,
      this.bulkheads,
      this.rateLimiters,
    ] as Map<string, Named<RegistryPolicy>>[]) {
      for (const { policy } of map.values()) policy.dispose();
      map.clear();
    }
    for (const { instances } of this.keyedBreakers.values()) instances.clear();
    for (const { instances } of this.keyedBulkheads.values()) instances.clear();
    for (const { instances } of this.keyedRateLimiters.values()) instances.clear();
    this.keyedBreakers.clear();
    this.keyedBulkheads.clear();
    this.keyedRateLimiters.clear();
    this.transitions.clear();
  }

  /**
   * @internal Every instance, for metric collection (see `collectMetrics`) and the bounded
   * listings of `/health` and the dashboard.
   */
  instancesForMetrics(): RegistryInstances {
    return this.all();
  }

  // ---- internals --------------------------------------------------------------------------------

  private all(): RegistryInstances {
    return {
      breakers: this.breakers,
      retries: this.retries,
      timeouts: this.timeouts,
      bulkheads: this.bulkheads,
      rateLimiters: this.rateLimiters,
      keyedBreakers: this.keyedBreakers,
      keyedBulkheads: this.keyedBulkheads,
      keyedRateLimiters: this.keyedRateLimiters,
    };
  }

  /** Options for instance `name` of `kind` under `config`, with the name and the clock. */
  private options(config: ValidConfig, kind: RegistryKind, name: string): OptionsData {
    checkName(name);
    return { ...optionsFor(config, kind, name), name, clock: this.clock };
  }

  private keyedBreakerGroup(name: string): Keyed<CircuitBreaker, BreakerKind> {
    const o = resolveBreakerOptions(this.options(this.config, 'circuitBreaker', name));
    const kind: BreakerKind = new BreakerKind(name, o, (breaker, event) => {
      this.transitions.record(name, kind.keyOf(breaker), event);
    });
    const { maxKeys, idleTimeout } = this.config.keys;
    const instances = new KeyedInstances(kind, this.clock, maxKeys, idleTimeout);
    kind.instances = instances;
    const group = { kind, instances };
    this.keyedBreakers.set(name, group);
    return group;
  }

  private keyedBulkheadGroup(name: string): Keyed<Bulkhead, BulkheadKind> {
    const o = resolveBulkheadOptions(this.options(this.config, 'bulkhead', name));
    const kind = new BulkheadKind(name, o);
    const { maxKeys, idleTimeout } = this.config.keys;
    const group = { kind, instances: new KeyedInstances(kind, this.clock, maxKeys, idleTimeout) };
    this.keyedBulkheads.set(name, group);
    return group;
  }

  private keyedRateLimiterGroup(name: string): Keyed<RateLimiter, RateLimiterKind> {
    const o = resolveRateLimiterOptions(this.options(this.config, 'rateLimiter', name));
    const kind = new RateLimiterKind(name, o);
    const { maxKeys, idleTimeout } = this.config.keys;
    const group = { kind, instances: new KeyedInstances(kind, this.clock, maxKeys, idleTimeout) };
    this.keyedRateLimiters.set(name, group);
    return group;
  }
}

function checkName(name: unknown): void {
  if (typeof name !== 'string' || name.length === 0) {
    throw new OptionsError('name', name, 'a non-empty string');
  }
}

/**
 * A registry for code that does not need an isolated one. Configure it from data with
 * `defaultRegistry.reconfigure(config)`; tests and multi-tenant applications should make
 * their own `new Registry(config)` instead.
 */
export const defaultRegistry: Registry = /* @__PURE__ */ new Registry();

brand(Registry, 'Registry');
