import type { PolicyKindConfigs } from '../../policies/kinds.js';
import type { Duration, KindConfigTypes, OptionsData } from '../../protocol/kind.js';

export type { OptionsData };

/** Limits on the keyed instances of each name (a registry keeps instances per key). */
export interface KeysConfig {
  /** Keys kept per keyed name before the least recently used is evicted. @default 10000 */
  readonly maxKeys?: number;
  /**
   * Keys kept per keyed name, protected ones included, in [maxKeys, 2147483647]: past
   * `maxKeys` only protected instances (an open breaker, a bulkhead with calls in flight) are
   * kept, and past this ceiling the least recently used open or half-open breakers are evicted
   * too, so keys that fail cannot hold memory without bound. @default 2 × maxKeys
   */
  readonly hardMaxKeys?: number;
  /** A key unused this long is dropped (`"Infinity"`: never). @default "10m" */
  readonly idleTimeout?: Duration;
}

type EntryOf<T> = T extends KindConfigTypes<string, infer E, unknown> ? E : never;
type DefaultsOf<T> = T extends KindConfigTypes<string, unknown, infer D> ? D : never;
type SectionOf<T> = T extends KindConfigTypes<infer S, unknown, unknown> ? S : never;

/** The config data of the kinds of `K`, by kind name. */
type ConfigOf<K> = {
  readonly defaults?: { readonly [N in keyof K]?: DefaultsOf<K[N]> };
  readonly keys?: KeysConfig;
} & { readonly [N in keyof K as SectionOf<K[N]>]?: Readonly<Record<string, EntryOf<K[N]>>> };

/**
 * Registry settings as plain JSON-compatible data, the shape kept in a JSON or YAML file:
 * `defaults` per policy kind (by kind name), a section of named instances per kind whose
 * options are the defaults with their own fields on top, and `keys`. Nested objects merge
 * field by field; one whose fields depend on its `kind` replaces the default's when it names
 * another kind. The library's kinds and their sections are listed, with an example, in
 * {@link PolicyKindConfigs}.
 *
 * The sections of kinds defined outside the library (given to a registry with its `kinds`
 * option) are typed by `K`, as `RegistryConfig<{ hedge: KindConfigTypes<'hedges', HedgeConfig> }>`;
 * a registry checks every kind's data against its descriptor whatever the type says.
 *
 * @typeParam K the config data types of kinds defined outside the library, by kind name
 */
export type RegistryConfig<
  K extends { readonly [N in keyof K]: KindConfigTypes } = Record<never, never>,
> = ConfigOf<PolicyKindConfigs & K>;

/** Defaults of {@link KeysConfig}. */
export const keysDefaults = Object.freeze({ maxKeys: 10_000, idleTimeout: 600_000 });

/** @internal Config data after validation. */
export interface ValidConfig {
  /** Per kind name, the defaults. */
  readonly defaults: ReadonlyMap<string, OptionsData>;
  /** Per kind name, each named entry merged over the defaults. */
  readonly named: ReadonlyMap<string, ReadonlyMap<string, OptionsData>>;
  readonly keys: {
    readonly maxKeys: number;
    readonly idleTimeout: number;
    readonly hardMaxKeys: number;
  };
}
