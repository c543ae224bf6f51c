import { describeValue } from '../../errors/describeValue.js';
import type {
  ConfigField,
  ConfigSchema,
  ConfigVariants,
  KindConfig,
  OptionsData,
} from '../../protocol/kind.js';
import { durationToMs } from '../../validation/duration.js';
import { closest } from '../../validation/validate.js';
import type { ConfigIssue } from '../ConfigError.js';
import { FORBIDDEN, METRICS } from './schema.js';

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** @internal A plain object (not null, not an array). */
export const isData = (v: unknown): v is OptionsData =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * @internal Walks untrusted data. Only own enumerable keys are read (`Object.keys`), a key that could
 * reach a prototype is reported and never followed, and results are built from the schemas'
 * own key names, so nothing is ever assigned through a key taken from the data.
 */
export class Reader {
  readonly issues: ConfigIssue[] = [];
  /** The value as written in the data, by config path, for messages. */
  readonly written = new Map<string, unknown>();

  /** `codeOnly`: options that exist in code but cannot come from data. */
  constructor(private readonly codeOnly: ReadonlySet<string>) {}

  issue(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  /** The own entries of a plain object, or undefined (and an issue) for anything else. */
  entries(value: unknown, path: string): [string, unknown][] | undefined {
    if (!isData(value)) {
      this.issue(path || '(root)', `expected an object, got ${describeValue(value)}`);
      return undefined;
    }
    const out: [string, unknown][] = [];
    for (const key of Object.keys(value)) {
      if (FORBIDDEN.has(key)) {
        this.issue(
          join(path, key),
          `is not allowed: \`${key}\` keys are rejected because they could change object prototypes`,
        );
        continue;
      }
      out.push([key, value[key]]);
    }
    return out;
  }

  unknownKey(path: string, key: string, known: Iterable<string>, noun = 'option'): void {
    if (this.codeOnly.has(key)) {
      this.issue(
        path,
        'cannot be set in config data: build the policy in code with it and add it with `registry.register`',
      );
      return;
    }
    if (key === 'name' && noun === 'option') {
      this.issue(path, 'cannot be set in config data: the name is the key of the entry');
      return;
    }
    const list = [...known];
    const suggestion = closest(key, list);
    this.issue(
      path,
      suggestion
        ? `is not a known ${noun} (did you mean \`${suggestion}\`?)`
        : `is not a known ${noun}; known ${noun}s are ${list.map((k) => `\`${k}\``).join(', ')}`,
    );
  }

  /** Reads options of one schema: unknown keys reported, durations in ms, known keys only. */
  options(value: unknown, fields: ConfigSchema, path: string): OptionsData | undefined {
    const entries = this.entries(value, path);
    if (entries === undefined) return undefined;
    const out: OptionsData = {};
    for (const [key, raw] of entries) {
      const at = join(path, key);
      const field = fields.get(key);
      if (field === undefined) {
        this.unknownKey(at, key, fields.keys());
        continue;
      }
      if (raw === undefined) continue;
      const v = this.field(raw, field, key, at);
      if (v !== INVALID) out[key] = v;
    }
    return out;
  }

  private field(raw: unknown, field: ConfigField, key: string, path: string): unknown {
    if (typeof field === 'string') {
      if (field === 'metrics' && isData(raw)) return this.options(raw, METRICS, path) ?? INVALID;
      return this.leaf(raw, field, path);
    }
    if ('variants' in field) return this.variants(raw, field, key, path) ?? INVALID;
    if ('reference' in field) {
      if (typeof raw === 'string' && raw.length > 0) return raw;
      this.issue(
        path,
        `expected the name of a \`${field.reference}\` instance (a non-empty string), got ${describeValue(raw)}`,
      );
      return INVALID;
    }
    return this.options(raw, field, path) ?? INVALID;
  }

  /** Reads an object whose keys depend on its `kind`: a key of another kind is reported. */
  private variants(
    value: unknown,
    { fields, variants, byName }: ConfigVariants,
    name: string,
    path: string,
  ): OptionsData | undefined {
    if (byName === true && typeof value === 'string') {
      if (variants.has(value)) return { kind: value };
      this.issue(
        path,
        `expected one of ${[...variants.keys()].map((k) => JSON.stringify(k)).join(', ')} or an object with its \`kind\`, got ${describeValue(value)}`,
      );
      return undefined;
    }
    const entries = this.entries(value, path);
    if (entries === undefined) return undefined;
    const kind = entries.find(([k]) => k === 'kind')?.[1];
    const allowed = typeof kind === 'string' ? variants.get(kind) : undefined;
    const out: OptionsData = {};
    for (const [key, raw] of entries) {
      const at = join(path, key);
      const field = fields.get(key);
      if (field === undefined) {
        this.unknownKey(at, key, allowed ?? fields.keys());
        continue;
      }
      if (allowed !== undefined && !allowed.includes(key)) {
        const suggestion = closest(key, allowed);
        this.issue(
          at,
          `is not an option of a \`${kind}\` ${name}${suggestion ? ` (did you mean \`${suggestion}\`?)` : ''}; its options are ${allowed.map((k) => `\`${k}\``).join(', ')}`,
        );
        continue;
      }
      if (raw === undefined) continue;
      const v = this.field(raw, field, key, at);
      if (v !== INVALID) out[key] = v;
    }
    return out;
  }

  private leaf(raw: unknown, field: ConfigField & string, path: string): unknown {
    this.written.set(path, raw);
    if (field === 'countOrInfinity') return raw === 'Infinity' ? Number.POSITIVE_INFINITY : raw;
    if ((field === 'duration' || field === 'durationOrInfinity') && typeof raw === 'string') {
      const ms = durationToMs(raw, field === 'durationOrInfinity');
      if (typeof ms === 'number') return ms;
      this.issue(path, ms.error);
      return INVALID;
    }
    return raw;
  }
}

const INVALID: unique symbol = Symbol('invalid');

/**
 * @internal A copy of options read with `schema`, through every object the schema nests (and
 * one level into any other object), so removing options never touches the original.
 */
export function copy(options: OptionsData, schema: ConfigSchema): OptionsData {
  const out: OptionsData = { ...options };
  for (const key of Object.keys(out)) {
    const value = out[key];
    if (!isData(value)) continue;
    const field = schema.get(key);
    if (field === undefined || typeof field === 'string' || 'reference' in field) {
      out[key] = { ...value };
    } else if ('variants' in field) out[key] = copy(value, field.fields);
    else out[key] = copy(value, field);
  }
  return out;
}

/**
 * @internal A named entry over the defaults: objects of a nested schema merge field by field,
 * an object whose keys depend on its `kind` merges when it keeps the default's kind (or names
 * none) and replaces the default otherwise, then the kind's own `merge` adjusts the result.
 */
export function mergeOptions(
  defaults: OptionsData,
  named: OptionsData,
  config: KindConfig,
): OptionsData {
  const out = mergeFields(defaults, named, config.schema);
  config.merge?.(defaults, named, out);
  return copy(out, config.schema);
}

function mergeFields(defaults: OptionsData, named: OptionsData, schema: ConfigSchema): OptionsData {
  const out: OptionsData = { ...defaults, ...named };
  for (const [key, field] of schema) {
    const d = defaults[key];
    const n = named[key];
    if (typeof field === 'string' || 'reference' in field || !isData(d) || !isData(n)) continue;
    if (!('variants' in field)) out[key] = mergeFields(d, n, field);
    else if (n.kind === undefined || n.kind === d.kind) out[key] = mergeFields(d, n, field.fields);
  }
  return out;
}
