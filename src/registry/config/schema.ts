import {
  type AnyPolicyKind,
  type ConfigField,
  type ConfigSchema,
  configSchema,
} from '../../protocol/kind.js';

/** @internal `metrics` is a boolean or an object of these fields. */
export const METRICS: ConfigSchema = configSchema([['latency', 'value']]);

/** @internal The `keys` section. */
export const KEYS: ConfigSchema = configSchema([
  ['maxKeys', 'value'],
  ['idleTimeout', 'durationOrInfinity'],
  ['hardMaxKeys', 'value'],
]);

/** @internal The duration options of the `keys` section. */
export const KEYS_DURATIONS: ReadonlySet<string> = new Set(['idleTimeout']);

/** @internal Keys that could reach an object's prototype if they were ever assigned through. */
export const FORBIDDEN: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** @internal How config data is read for a list of kinds. */
export interface ConfigKinds {
  /** The kinds, as `defaults` names them. */
  readonly names: readonly string[];
  readonly byName: ReadonlyMap<string, AnyPolicyKind>;
  /** The kind whose named instances a section holds. */
  readonly bySection: ReadonlyMap<string, AnyPolicyKind>;
  /** The keys of the config data itself. */
  readonly topKeys: readonly string[];
  /** Options that exist in code but cannot come from data. */
  readonly codeOnly: ReadonlySet<string>;
  /** Per kind, the paths of its duration options, for the hint on how to write one. */
  readonly durations: ReadonlyMap<AnyPolicyKind, ReadonlySet<string>>;
}

/**
 * @internal The tables config data is read with, from `kinds` (of distinct names and
 * sections, none named as a top key: the registry's `kinds` option is checked for that).
 */
export function configKinds(kinds: readonly AnyPolicyKind[]): ConfigKinds {
  const byName = new Map<string, AnyPolicyKind>();
  const bySection = new Map<string, AnyPolicyKind>();
  const codeOnly = new Set(['clock']);
  const durations = new Map<AnyPolicyKind, ReadonlySet<string>>();
  for (const kind of kinds) {
    byName.set(kind.name, kind);
    bySection.set(kind.section, kind);
    for (const option of kind.config.codeOnly ?? []) codeOnly.add(option);
    durations.set(kind, durationPaths(kind.config.schema, '', new Set()));
  }
  return {
    names: [...byName.keys()],
    byName,
    bySection,
    topKeys: ['defaults', ...bySection.keys(), 'keys'],
    codeOnly,
    durations,
  };
}

function durationPaths(schema: ConfigSchema, prefix: string, into: Set<string>): Set<string> {
  for (const [key, field] of schema) durationPath(field, `${prefix}${key}`, into);
  return into;
}

function durationPath(field: ConfigField, path: string, into: Set<string>): void {
  if (field === 'duration' || field === 'durationOrInfinity') into.add(path);
  else if (typeof field === 'string' || 'reference' in field) return;
  else if ('variants' in field) durationPaths(field.fields, `${path}.`, into);
  else durationPaths(field, `${path}.`, into);
}

/** @internal The options of `schema` that name an instance of another kind, by option. */
export function referencesOf(schema: ConfigSchema): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const [key, field] of schema) {
    if (typeof field === 'object' && 'reference' in field) out.set(key, field.reference);
  }
  return out;
}
