import { describeValue } from '../../errors/describeValue.js';
import { OptionsError, UsageError } from '../../errors/OptionsError.js';
import type { AnyPolicyKind, MissingOptionContext, OptionsData } from '../../protocol/kind.js';
import { duration as durationOption, integer, STRING_FORM } from '../../validation/validate.js';
import { ConfigError, type ConfigIssue } from '../ConfigError.js';
import { copy, isData, mergeOptions, Reader } from './read.js';
import { configKinds, KEYS, KEYS_DURATIONS, referencesOf } from './schema.js';
import { keysDefaults, type ValidConfig } from './types.js';

type Resolver = (options: OptionsData) => unknown;

const NONE: ReadonlyMap<string, readonly string[]> = new Map();
const KEYS_DEPEND: ReadonlyMap<string, readonly string[]> = new Map([['hardMaxKeys', ['maxKeys']]]);

/** What {@link collect} needs to know of the options it checks. */
interface Checked {
  /** Checks options, throwing `OptionsError` at the first bad one. */
  readonly resolve: Resolver;
  /** Paths of duration options, for the hint on how to write one. */
  readonly durations: ReadonlySet<string>;
  /** Option paths whose valid range depends on others: checked only once those are valid. */
  readonly dependsOn: ReadonlyMap<string, readonly string[]>;
}

/**
 * Runs the policy's own resolver over `options`, so the limits are exactly the policy's.
 * The resolver stops at the first bad option; each is reported, removed and the rest checked
 * again, until the options pass. `place` maps an option path to where it sits in the data.
 */
function collect(
  r: Reader,
  { resolve, durations, dependsOn }: Checked,
  options: OptionsData,
  place: (option: string) => { path: string; from?: string },
): void {
  const failed = new Set<string>();
  for (let round = 0; round < 100; round++) {
    try {
      resolve(options);
      return;
    } catch (error) {
      if (!(error instanceof OptionsError)) throw error;
      const option = error.option;
      // A range that depends on an option already found invalid says nothing new.
      const dependent =
        failed.has(option) || dependsOn.get(option)?.some((o) => failed.has(o)) === true;
      failed.add(option);
      if (!dependent) {
        const { path, from } = place(option);
        const source = from ?? path;
        const written = r.written.has(source) ? r.written.get(source) : error.value;
        // No hint on how to write a duration that must be left out altogether, nor where
        // the policy's own message already gives one.
        const durationHint =
          durations.has(option) &&
          !error.expected.startsWith('undefined') &&
          !error.expected.includes('a string like')
            ? STRING_FORM
            : '';
        const origin = from === undefined ? '' : ` (from \`${from}\`)`;
        r.issue(
          path,
          `expected ${error.expected}${durationHint}, got ${describeValue(written)}${origin}`,
        );
      }
      if (!removeOption(options, option)) return;
    }
  }
}

/**
 * Removes the option at a dotted path, or (when part of the path is missing) the deepest
 * object on it; false when not even its first key is there.
 */
function removeOption(options: OptionsData, option: string): boolean {
  let parent: unknown = options;
  let container: OptionsData | undefined;
  let last = '';
  for (const key of option.split('.')) {
    if (!isData(parent) || !Object.hasOwn(parent, key)) break;
    container = parent;
    last = key;
    parent = parent[key];
  }
  if (container === undefined) return false;
  delete container[last];
  return true;
}

function hasOption(options: OptionsData, option: string): boolean {
  let parent: unknown = options;
  for (const key of option.split('.')) {
    if (!isData(parent) || !Object.hasOwn(parent, key)) return false;
    parent = parent[key];
  }
  return true;
}

/**
 * @internal Validates registry config data for `kinds`, collecting every problem (each with
 * its path) into one {@link ConfigError}. Numbers are checked by the kinds' own option
 * resolvers, so a value is accepted from data exactly when the policy accepts it in code.
 */
export function validateConfig(input: unknown, kinds: readonly AnyPolicyKind[]): ValidConfig {
  const { config, issues } = readConfig(input, kinds);
  if (issues.length > 0) throw new ConfigError(issues);
  return config;
}

/**
 * @internal {@link validateConfig} that answers the problems instead of throwing, with the
 * config as far as it is valid (an entry with a problem as it was written), so that
 * `reconfigure` can report them beside those of the instances.
 */
export function readConfig(
  input: unknown,
  kinds: readonly AnyPolicyKind[],
): { config: ValidConfig; issues: readonly ConfigIssue[] } {
  const table = configKinds(kinds);
  const r = new Reader(table.codeOnly);
  const defaultsData = new Map<AnyPolicyKind, OptionsData>();
  const namedData = new Map<AnyPolicyKind, Map<string, OptionsData>>(
    kinds.map((k) => [k, new Map()]),
  );
  let keysData: OptionsData = {};
  const top = input === undefined ? [] : (r.entries(input, '') ?? []);
  for (const [key, value] of top) {
    if (value === undefined) continue;
    if (key === 'defaults') {
      for (const [name, options] of r.entries(value, 'defaults') ?? []) {
        const kind = table.byName.get(name);
        const at = `defaults.${name}`;
        if (kind === undefined) r.unknownKey(at, name, table.names, 'policy kind');
        else if (options !== undefined) {
          defaultsData.set(kind, r.options(options, kind.config.schema, at) ?? {});
        }
      }
    } else if (key === 'keys') {
      keysData = r.options(value, KEYS, 'keys') ?? {};
    } else {
      const kind = table.bySection.get(key);
      if (kind === undefined) {
        r.unknownKey(key, key, table.topKeys, 'key');
        continue;
      }
      for (const [name, options] of r.entries(value, key) ?? []) {
        if (name === '') {
          r.issue(`${key}[""]`, 'an instance name must not be empty');
          continue;
        }
        const data = r.options(options, kind.config.schema, `${key}.${name}`);
        if (data !== undefined) namedData.get(kind)!.set(name, data);
      }
    }
  }

  const defaults = new Map<string, OptionsData>();
  const named = new Map<string, Map<string, OptionsData>>();
  for (const kind of kinds) {
    const { config } = kind;
    const references = referencesOf(config.schema);
    // A reference is checked as a name when read; the resolver, which takes the instance, never
    // sees it here.
    const unreferenced = (o: OptionsData): OptionsData => {
      for (const key of references.keys()) delete o[key];
      return o;
    };
    const checked: Checked = {
      resolve: config.check
        ? (o) => config.check!(unreferenced(o))
        : (o) => kind.resolve(unreferenced(o)),
      durations: table.durations.get(kind)!,
      dependsOn: config.dependsOn ?? NONE,
    };
    const defaultsAt = `defaults.${kind.name}`;
    for (const [key, target] of references) {
      if (!table.byName.has(target)) {
        throw new UsageError(
          `The ${kind.label} option \`${key}\` names instances of the policy kind \`${target}\`, which the registry does not hold`,
        );
      }
    }
    const d = copy(defaultsData.get(kind) ?? {}, config.schema);
    collect(r, checked, d, (option) => ({ path: `${defaultsAt}.${option}` }));
    defaults.set(kind.name, d);
    const where: MissingOptionContext = {
      entry: true,
      defaults: defaultsAt,
      section: kind.section,
    };
    const entries = new Map<string, OptionsData>();
    for (const [name, own] of namedData.get(kind)!) {
      const merged = mergeOptions(d, own, config);
      const at = `${kind.section}.${name}`;
      const missing = config.missing?.(merged, where);
      if (missing !== undefined) r.issue(`${at}.${missing.option}`, missing.message);
      collect(r, checked, copy(merged, config.schema), (option) => ({
        path: `${at}.${option}`,
        from:
          !hasOption(own, option) && hasOption(d, option) ? `${defaultsAt}.${option}` : undefined,
      }));
      entries.set(name, merged);
    }
    named.set(kind.name, entries);
  }

  // A reference must name an entry: a typo would otherwise get a default instance of its own.
  for (const kind of kinds) {
    for (const [key, target] of referencesOf(kind.config.schema)) {
      const targetKind = table.byName.get(target)!;
      const known = [...namedData.get(targetKind)!.keys()];
      const check = (data: OptionsData | undefined, path: string): void => {
        const name = data?.[key];
        if (typeof name !== 'string' || name === '' || known.includes(name)) return;
        const list =
          known.length === 0
            ? `none (add an entry under ${targetKind.section})`
            : known.map((n) => JSON.stringify(n)).join(', ');
        r.issue(
          path,
          `names the ${target} ${JSON.stringify(name)}, which the config does not define; its ${targetKind.section} are ${list}`,
        );
      };
      check(defaultsData.get(kind), `defaults.${kind.name}.${key}`);
      for (const [name, own] of namedData.get(kind)!) check(own, `${kind.section}.${name}.${key}`);
    }
  }

  let maxKeys: number = keysDefaults.maxKeys;
  let idleTimeout: number = keysDefaults.idleTimeout;
  let hardMaxKeys = 2 * maxKeys;
  const keys: Checked = {
    resolve: (o) => {
      maxKeys = integer(o.maxKeys, 'maxKeys', keysDefaults.maxKeys, 1, 2_147_483_647);
      idleTimeout = durationOption(o.idleTimeout, 'idleTimeout', keysDefaults.idleTimeout, 1, true);
      const max = 2_147_483_647;
      hardMaxKeys = integer(o.hardMaxKeys, 'hardMaxKeys', Math.min(2 * maxKeys, max), maxKeys, max);
    },
    durations: KEYS_DURATIONS,
    dependsOn: KEYS_DEPEND,
  };
  collect(r, keys, copy(keysData, KEYS), (option) => ({ path: `keys.${option}` }));

  return {
    config: { defaults, named, keys: { maxKeys, idleTimeout, hardMaxKeys } },
    issues: r.issues,
  };
}

/**
 * @internal The options data of instance `name` of `kind`: its entry, or the defaults for a
 * name without one. Throws {@link ConfigError} when they lack an option the kind cannot be
 * built without (see its `config.missing`).
 */
export function optionsFor(config: ValidConfig, kind: AnyPolicyKind, name: string): OptionsData {
  const entry = config.named.get(kind.name)?.get(name);
  const data = entry ?? config.defaults.get(kind.name) ?? {};
  const missing = kind.config.missing?.(data, {
    entry: entry !== undefined,
    defaults: `defaults.${kind.name}`,
    section: kind.section,
  });
  if (missing !== undefined) {
    throw new ConfigError([
      { path: `${kind.section}.${name}.${missing.option}`, message: missing.message },
    ]);
  }
  return data;
}
