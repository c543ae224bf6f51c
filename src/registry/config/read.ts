import { describeValue } from '../../errors/describeValue.js';
import { closest } from '../../validation/validate.js';
import type { ConfigIssue } from '../ConfigError.js';
import { durationToMs } from '../duration.js';
import {
  CODE_ONLY,
  type Field,
  FORBIDDEN,
  METRICS,
  type Schema,
  WINDOW,
  WINDOW_FIELDS,
} from './schema.js';
import type { OptionsData } from './types.js';

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
    if (CODE_ONLY.has(key)) {
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
  options(value: unknown, fields: Schema, path: string): OptionsData | undefined {
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
      if (typeof field !== 'string') {
        const nested = this.options(raw, field, at);
        if (nested !== undefined) out[key] = nested;
      } else if (field === 'metrics' && isData(raw)) {
        const nested = this.options(raw, METRICS, at);
        if (nested !== undefined) out[key] = nested;
      } else if (field === 'window') {
        const window = this.window(raw, at);
        if (window !== undefined) out[key] = window;
      } else {
        const v = this.leaf(raw, field, at);
        if (v !== INVALID) out[key] = v;
      }
    }
    return out;
  }

  private window(value: unknown, path: string): OptionsData | undefined {
    const entries = this.entries(value, path);
    if (entries === undefined) return undefined;
    const kind = entries.find(([k]) => k === 'kind')?.[1];
    const allowed = typeof kind === 'string' ? WINDOW_FIELDS.get(kind) : undefined;
    const out: OptionsData = {};
    for (const [key, raw] of entries) {
      const at = join(path, key);
      const field = WINDOW.get(key);
      if (field === undefined) {
        this.unknownKey(at, key, allowed ?? WINDOW.keys());
        continue;
      }
      if (allowed !== undefined && !allowed.includes(key)) {
        const suggestion = closest(key, allowed);
        this.issue(
          at,
          `is not an option of a \`${kind}\` window${suggestion ? ` (did you mean \`${suggestion}\`?)` : ''}; its options are ${allowed.map((k) => `\`${k}\``).join(', ')}`,
        );
        continue;
      }
      if (raw === undefined) continue;
      const v = this.leaf(raw, field as Field & string, at);
      if (v !== INVALID) out[key] = v;
    }
    return out;
  }

  private leaf(raw: unknown, field: Field & string, path: string): unknown {
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

/** A rate limiter's rate as `limit` calls per `period` with a `burst`. */
const LIMIT_FORM: readonly string[] = ['limit', 'period', 'burst'];
/** A rate limiter's rate as a token bucket. */
const BUCKET_FORM: readonly string[] = ['capacity', 'refillRate'];

/** @internal A copy two levels deep, so removing options never touches the original. */
export function copy(options: OptionsData): OptionsData {
  const out: OptionsData = { ...options };
  for (const key of Object.keys(out)) if (isData(out[key])) out[key] = { ...out[key] };
  return out;
}

/**
 * @internal A named entry over the defaults: nested objects merge field by field, and a
 * window of another kind replaces the default window.
 */
export function mergeOptions(defaults: OptionsData, named: OptionsData): OptionsData {
  const out: OptionsData = { ...defaults, ...named };
  for (const key of ['breakBackoff', 'halfOpen']) {
    if (isData(defaults[key]) && isData(named[key])) out[key] = { ...defaults[key], ...named[key] };
  }
  // A rate given in the other form replaces the default rate (only rate limiters have these).
  const sets = (key: string) => named[key] !== undefined;
  const drop = (keys: readonly string[]) => {
    for (const key of keys) if (!sets(key)) delete out[key];
  };
  if (sets('limit')) drop(BUCKET_FORM);
  if (BUCKET_FORM.some(sets)) drop(LIMIT_FORM);
  const dw = defaults.window;
  const nw = named.window;
  if (isData(dw) && isData(nw) && (nw.kind === undefined || nw.kind === dw.kind)) {
    out.window = { ...dw, ...nw };
  }
  return copy(out);
}
