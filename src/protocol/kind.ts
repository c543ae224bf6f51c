import type { LatencyHistogram } from '../telemetry/LatencyHistogram.js';
import type { MetricFamilyDescriptor, SeriesSink } from '../telemetry/metricFamily.js';

/**
 * How one key of config data is read: as is, as a duration (`"30s"` or ms), as a duration or
 * `"Infinity"`, as a count or `"Infinity"`, as a `metrics` option (a boolean or an object of
 * its fields), as a nested object of known keys, as an object whose keys depend on its
 * `kind` field (see {@link ConfigVariants}), or as the name of an instance of another kind
 * (see {@link ConfigReference}).
 */
export type ConfigField =
  | 'value'
  | 'duration'
  | 'durationOrInfinity'
  | 'countOrInfinity'
  | 'metrics'
  | ConfigSchema
  | ConfigVariants
  | ConfigReference;

/**
 * An option whose value in config data is the name of an instance of another kind of the
 * registry (a retry's `budget: "payments"`, naming an entry of `retryBudgets`, or a name that
 * takes that kind's defaults). The registry gives the kind's resolver that instance, the one
 * its named accessor returns, so every policy naming it shares it.
 */
export interface ConfigReference {
  /** The `name` of the kind whose instance the option names (`retryBudget`). */
  readonly reference: string;
}

/**
 * The keys an object of config data may have, and how each is read. A `Map`, so lookups by
 * keys taken from the data never reach a prototype.
 */
export type ConfigSchema = ReadonlyMap<string, ConfigField>;

/**
 * An object of config data whose keys depend on its `kind` (a breaker's window). In a named
 * entry it merges field by field over the default when it keeps the default's kind, and
 * replaces it otherwise.
 */
export interface ConfigVariants {
  /** Every key any variant may have, and how each is read. */
  readonly fields: ConfigSchema;
  /** The keys each value of `kind` takes (`kind` itself included). */
  readonly variants: ReadonlyMap<string, readonly string[]>;
  /**
   * When true, the object may also be written as a value of `kind` alone, as code takes it
   * (an adaptive limit's `algorithm: "vegas"`, read as `{ kind: "vegas" }`). @default false
   */
  readonly byName?: boolean;
}

/** The unit of a {@link DurationString}: milliseconds, seconds, minutes or hours. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h';

/**
 * A duration written with its unit, as every duration option accepts it in code and in config
 * data: digits (a fraction allowed) and `ms`, `s`, `m` or `h`: `"250ms"`, `"30s"`, `"1.5s"`,
 * `"5m"`, `"1h"`. Options that allow Infinity also take `"Infinity"`. The type lets a few
 * strings through that the check refuses (signs, exponents: `"-5s"`, `"1e3ms"`); the check,
 * when the policy is built, is the authority.
 */
export type DurationString = `${number}${DurationUnit}`;

/**
 * A duration in config data: a number of milliseconds, or a {@link DurationString}
 * (`"250ms"`, `"30s"`, `"1.5s"`, `"5m"`, `"1h"`). Nothing else is accepted (no spaces, signs,
 * exponents, compound forms or bare digit strings), so a typo cannot turn into a surprising
 * value. Typed `string` because data read from a file or built in a variable is; options in
 * code take `number | DurationString`.
 */
export type Duration = number | string;

/** One kind's options as plain data: the policy's own keys, durations in ms. */
export type OptionsData = Record<string, unknown>;

/**
 * How a kind's options come from config data (a registry's `defaults.<kind>` and its section
 * of named entries). Numbers are checked by the kind's own resolver, so a value is accepted
 * from data exactly when the policy accepts it in code.
 */
export interface KindConfig {
  /** The keys of the kind's options in data. */
  readonly schema: ConfigSchema;
  /** Options of the kind that exist in code only (functions, objects), for clear messages. */
  readonly codeOnly?: readonly string[];
  /**
   * Checks options data, throwing `OptionsError` at the first bad option. Defaults may leave
   * out what only a named entry must give (a timeout's duration): the check stands in for it.
   * @default the kind's `resolve`
   */
  check?(data: OptionsData): void;
  /**
   * What an instance's options data lack to be built, or undefined when they are complete:
   * the option to name (a path in the kind's options) and the message saying so, worded from
   * `where` the data came.
   */
  missing?(data: OptionsData, where: MissingOptionContext): MissingOption | undefined;
  /**
   * Adjusts a named entry merged over the defaults (`merged` is `{...defaults, ...named}` with
   * nested objects merged field by field): a rate given in another form replaces the default's.
   */
  merge?(defaults: OptionsData, named: OptionsData, merged: OptionsData): void;
  /**
   * Option paths whose valid range depends on other options: not reported again once one of
   * those was found invalid.
   */
  readonly dependsOn?: ReadonlyMap<string, readonly string[]>;
}

/** Where the options data of an instance that lacks an option came from, for its message. */
export interface MissingOptionContext {
  /**
   * True for a named entry of the kind's section merged over the defaults; false for a name
   * with no entry, which takes the defaults alone.
   */
  readonly entry: boolean;
  /** The path of the kind's defaults in config data (`defaults.timeout`). */
  readonly defaults: string;
  /** The kind's config section (`timeouts`). */
  readonly section: string;
}

/** An option an instance cannot be built without, as {@link KindConfig.missing} reports it. */
export interface MissingOption {
  /** The option's path in the kind's options (`timeout`). */
  readonly option: string;
  /** What to say of it, after its path (`is required: ...`). */
  readonly message: string;
}

/**
 * The types of one kind's config data, as `RegistryConfig` names them: the name of its
 * section, a named entry, and its defaults (which may leave out what each entry must give).
 *
 * @typeParam S the section's name (`"timeouts"`)
 * @typeParam E a named entry's data
 * @typeParam D the data of `defaults.<kind>` @default `E`
 */
export interface KindConfigTypes<S extends string = string, E = object, D = E> {
  readonly section: S;
  readonly entry: E;
  readonly defaults: D;
}

/** How an instance shows in snapshots, listings and the dashboard: plain JSON data. */
export interface InstanceView {
  /** The state of a kind that has states (a breaker's `closed`, `open`, ...). */
  readonly state?: string;
  readonly stats: object;
}

/**
 * How the dashboard shows one instance, computed from its {@link InstanceView} on the server.
 * Counters are totals since the instance was made: the page shows their growth per second.
 */
export interface DashboardRow {
  /** Calls admitted. */
  readonly calls?: number;
  /** Calls refused. */
  readonly rejected?: number;
  /** What the sparkline plots, when not the calls. */
  readonly trend?: number;
  /** What the sparkline plots, in words (`retries per second`). */
  readonly trendLabel?: string;
  /** Calls that failed (a breaker's failures, a retry's calls that gave up): charted per second. */
  readonly failed?: number;
  /**
   * Levels charted as they are, not per second, in the order given: what is in flight and its
   * limit, a budget's balance. The dashboard draws one line per entry, named by its key.
   */
  readonly levels?: Readonly<Record<string, number>>;
  /** What the levels chart shows, in words (`calls in flight`). @default 'levels' */
  readonly levelsLabel?: string;
  /** One line of the instance's current figures. */
  readonly detail: string;
}

/** Attributes of a span event, as plain values. */
export type SpanEventAttributes = Record<string, string | number | boolean>;

/**
 * A span event made from the messages of a `node:diagnostics_channel` channel (see
 * `traceBreakwaterEvents`): the event lands on the span active where the message is published.
 */
export interface KindSpanEvent {
  /** The channel whose messages make the event. */
  readonly channel: string;
  /** The event's name. */
  readonly name: string;
  /**
   * The event's attributes, or undefined for a message that makes none: one of another kind on
   * a shared channel, or one published outside the async context of the call it concerns.
   */
  attributes(message: Readonly<Record<string, unknown>>): SpanEventAttributes | undefined;
  /** Its key in `spanEventNames` (`retry`), for the library's kinds. */
  readonly key?: string;
  /**
   * Its attributes in words, for docs/observability.md; `{name}` stands for the values given
   * under that name in {@link values} by every kind that makes the event.
   */
  readonly doc?: string;
  /** Values the {@link doc} names, by placeholder (`reasons`: the kind's refusal reasons). */
  readonly values?: Readonly<Record<string, readonly string[]>>;
}

/**
 * A `node:diagnostics_channel` channel a kind publishes to, as `diagnosticsChannels` and
 * docs/observability.md list it. Kinds that share a channel (refusals) each name it.
 */
export interface KindChannel {
  /** Its key in `diagnosticsChannels` (`stateChange`). */
  readonly key: string;
  /** The channel's name (`breakwater:retry`). */
  readonly channel: string;
  /** Its message in words, for the docs: `{ name, attempt, delay, error }` and what they mean. */
  readonly message: string;
}

/** Whether an instance lets traffic through, for `/health`. */
export type InstanceHealth = 'ok' | 'degraded' | 'down';

/**
 * What a keyed group of instances needs of its kind (see the registry's keyed instances):
 * how instances are built, shelved as numbers while idle, protected from eviction, and what
 * their counts leave behind when they go.
 */
export interface KeyedKind<T> {
  /** Numbers kept per key while the key has no instance (0 for none). */
  readonly stride: number;
  /** A new instance for `key`. */
  create(key: string): T;
  /** Restores an instance just made from the numbers at `store[at..at+stride)` (zeros: fresh). */
  revive(instance: T, store: Float64Array, at: number): void;
  /**
   * When the instance can be dropped losing nothing but its identity, writes its numbers at
   * `store[at..)`, releases what it holds and returns true; otherwise returns false.
   */
  shelve(instance: T, store: Float64Array, at: number, key: string): boolean;
  /**
   * True when the instance must not be evicted at `now`, with keys dropped after
   * `idleTimeout` ms unused.
   */
  isProtected(instance: T, now: number, idleTimeout: number): boolean;
  /**
   * Optional: true when a protected instance may still be evicted once its name holds
   * `keys.hardMaxKeys` keys (a breaker open or half-open because its key failed, but not one
   * set to a state by hand, nor a bulkhead with calls in flight). Without it, none is.
   */
  yieldsAtCeiling?(instance: T): boolean;
  /**
   * Takes the counts of a key being dropped: its instance, or (`instance` undefined) its
   * numbers at `store[at..at+stride)`.
   */
  retire(instance: T | undefined, store: Float64Array, at: number): void;
  /** Releases everything an evicted instance holds. */
  dispose(instance: T): void;
}

/** The instances of one keyed name, as a {@link KeyedGroup} sees them. */
export interface KeyedInstancesView<T> {
  /** The instance of `key` if it is held as an object (not shelved), without using it. */
  peek(key: string): T | undefined;
  /** Calls `fn` for every key held: its instance, or its numbers when shelved. */
  forEach(
    fn: (key: string, instance: T | undefined, store: Float64Array, at: number) => void,
  ): void;
}

/**
 * The keyed instances of one name: built from one set of resolved options, shelved when idle.
 * Made by {@link PolicyKindDescriptor.keyed} when the name is first used.
 */
export interface KeyedGroup<P, R, C = unknown> extends KeyedKind<P> {
  /** The options every key of the name is built from. */
  readonly options: R;
  /** One histogram for every key of the name, when the kind keeps latency metrics. */
  readonly latency: LatencyHistogram | undefined;
  /** Set once by the registry, before the first key is made. */
  instances: KeyedInstancesView<P>;
  /**
   * Checks that `instance` can take `options` (throws `OptionsError` otherwise); an instance
   * that cannot, and is not protected, is dropped instead.
   */
  check(instance: P, options: R): void;
  /** Applies new options to the group and its instances, kept ones in `keep`. */
  apply(options: R, keep: readonly P[]): void;
  /** The view of a key: its instance, or (`instance` undefined) its numbers. */
  view(instance: P | undefined, store: Float64Array, at: number): InstanceView;
  /** Metrics: false when the name's instances are built with metrics off. @default true */
  readonly metricsEnabled?: boolean;
  /** Metrics: the counts left behind by keys dropped or shelved. */
  readonly retired?: C;
  /** Metrics: adds the numbers of a shelved key to `counts`. */
  addShelved?(counts: C, store: Float64Array, at: number): void;
}

/** What a registry gives a kind's instances: where their state changes go. */
export interface KindHooks {
  /** Records a state change of the instance named `name` (and `key` for a keyed one). */
  stateChange(name: string, key: string | undefined, event: object): void;
}

/**
 * A kind's metric families and how its instances report into them. Collection reads
 * instances at scrape time; nothing runs per call.
 */
export interface KindMetrics<P, C> {
  /** Every family the kind reports, in the order it reports them. */
  readonly families: readonly MetricFamilyDescriptor[];
  /** False for an instance built with metrics off. @default always true */
  enabled?(policy: P): boolean;
  /** The latency histogram of an instance that keeps one. */
  latency?(policy: P): LatencyHistogram | undefined;
  /** Empty counts, for one instance or the sum of several. */
  counts(): C;
  /** Adds the current numbers of `policy` to `counts`. */
  add(counts: C, policy: P): void;
  /** Adds `other` (a group's retired counts) to `counts`. */
  addCounts(counts: C, other: C): void;
  /** True when `counts` hold nothing (a group's retired counts without a series to show). */
  isEmpty(counts: C): boolean;
  /** Writes the series of one instance (or sum) labelled `name` and `key`. */
  series(sink: SeriesSink, name: string, key: string, counts: C): void;
}

/**
 * One policy kind: everything the registry, config data, decorators, snapshots, metrics,
 * OpenTelemetry and the dashboard need to know about it, in one object in the kind's folder.
 * The library's kinds are listed in `policies/kinds.ts`; a kind defined elsewhere is given to
 * a `Registry` with its `kinds` option.
 *
 * Its refusals need no entry here: a refusal error extends `PolicyRejectedError` and says
 * whether the call reached the dependency, which breakers and retries read.
 *
 * @typeParam P the policy class
 * @typeParam R its resolved options
 * @typeParam C its metric counts
 */
export interface PolicyKindDescriptor<P extends object = object, R = unknown, C = unknown> {
  /**
   * The kind's name: its key under config `defaults`, its `kind` in snapshots, its `kind`
   * label in metrics (`circuitBreaker`). Also the decorator's label unless `decoratorName`.
   */
  readonly name: string;
  /** The kind in words, for messages and the dashboard (`circuit breaker`). */
  readonly label: string;
  /** The config section of its named instances (`circuitBreakers`). */
  readonly section: string;
  /** The decorator's name in messages, when not {@link name} (`rateLimit`). */
  readonly decoratorName?: string;
  /** True for an instance of the kind (of this copy of the library). */
  is(value: unknown): value is P;
  /** A new instance from options in code, as the kind's factory takes them. */
  create(options: unknown): P;
  /** Checked and resolved options from options data (with `name` and `clock`). */
  resolve(data: OptionsData): R;
  /**
   * Checks that `policy` can take `options` now (throws `OptionsError` otherwise) and returns
   * the function that applies them.
   */
  reconfigure(policy: P, options: R): () => void;
  /** Releases what `policy` holds, when the registry disposes of it or evicts its key. */
  dispose(policy: P): void;
  /** How an instance shows in snapshots. */
  view(policy: P): InstanceView;
  /** How config data gives its options. */
  readonly config: KindConfig;
  /** Instances per key under one name; absent for kinds kept by name only. */
  keyed?(name: string, options: R, hooks: KindHooks): KeyedGroup<P, R, C>;
  /** Connects a named instance to its registry (state changes). */
  attach?(policy: P, name: string, hooks: KindHooks): void;
  /**
   * The current state of an instance of a kind that has states (a breaker's `closed`, ...),
   * read without building its view: listings show instances out of {@link restState} first.
   */
  state?(policy: P): string;
  /** The state of an instance that needs no attention (a breaker's `closed`). */
  readonly restState?: string;
  /** Whether an instance in `state` lets traffic through, for `/health`. @default `ok` */
  health?(state: string): InstanceHealth;
  readonly metrics?: KindMetrics<P, C>;
  /** The diagnostics channels the kind publishes to. @default none */
  readonly channels?: readonly KindChannel[];
  /** Span events made from the channels the kind publishes to. @default none */
  readonly spanEvents?: readonly KindSpanEvent[];
  /** How the dashboard shows an instance. @default its name and state alone */
  dashboard?(view: InstanceView): DashboardRow;
}

/** A {@link ConfigSchema} from its entries, in order. */
export const configSchema = (fields: readonly (readonly [string, ConfigField])[]): ConfigSchema =>
  new Map(fields);

/** Any policy kind, whatever its policy, options and counts (the type of a list of kinds). */
// biome-ignore lint/suspicious/noExplicitAny: a list holds kinds of unrelated type parameters.
export type AnyPolicyKind = PolicyKindDescriptor<any, any, any>;

/**
 * The key under which a policy of a kind defined outside the library may carry its kind's
 * descriptor (on its prototype), so that a registry takes it without being given the kind:
 * `register` accepts it, and a named one built in code shows in `defaultRegistry`'s listings.
 *
 * @example
 * ```ts
 * Object.defineProperty(MyLimiter.prototype, POLICY_KIND, { value: myLimiterKind });
 * ```
 */
export const POLICY_KIND: unique symbol = Symbol.for('breakwater.policyKind');

/** A policy kind whose instances are `P`, whatever its options and counts. */
// biome-ignore lint/suspicious/noExplicitAny: only the policy type matters to who holds it.
export type PolicyKindOf<P extends object> = PolicyKindDescriptor<P, any, any>;
