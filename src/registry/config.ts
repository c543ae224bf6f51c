import { describeValue } from '../errors/describeValue.js';
import { OptionsError } from '../errors/OptionsError.js';
import { resolveBulkheadOptions } from '../policies/bulkhead/options.js';
import { resolveBreakerOptions } from '../policies/circuit-breaker/options.js';
import { resolveRateLimiterOptions } from '../policies/rate-limiter/options.js';
import type { BackoffKind, JitterKind } from '../policies/retry/options.js';
import { resolveRetryOptions } from '../policies/retry/options.js';
import { resolveTimeoutOptions, type TimeoutStrategy } from '../policies/timeout/options.js';
import type { MetricsOptions } from '../telemetry/metrics.js';
import {
  closest,
  duration as durationOption,
  integer,
  MAX_DURATION_MS,
} from '../validation/validate.js';
import { ConfigError, type ConfigIssue } from './ConfigError.js';
import { type Duration, durationToMs } from './duration.js';

// ---- the shape of config data ------------------------------------------------------------------

/**
 * A breaker's window in config data. `kind` picks the fields that apply (see
 * `WindowOptions`); in a named entry it may be left out to keep the kind of the default
 * window and change some of its fields.
 */
export interface WindowConfig {
  readonly kind?: 'consecutive' | 'count' | 'time';
  /** consecutive: failures in a row that open the breaker. */
  readonly threshold?: number;
  /** count: calls remembered. */
  readonly size?: number;
  /** count and time: calls needed before a rate is judged. */
  readonly minimumCalls?: number;
  /** time: the window's length. */
  readonly duration?: Duration;
  /** time: slices the window is kept in. */
  readonly buckets?: number;
}

/** A circuit breaker's options as config data (no functions, no clock, no initial state). */
export interface CircuitBreakerConfig {
  readonly window?: WindowConfig;
  readonly failureRateThreshold?: number;
  readonly slowCallDuration?: Duration;
  readonly slowCallRateThreshold?: number;
  readonly breakDuration?: Duration;
  readonly breakBackoff?: { readonly multiplier?: number; readonly maxDuration?: Duration };
  readonly halfOpen?: {
    readonly probes?: number;
    readonly maxConcurrent?: number;
    readonly successRatio?: number;
    readonly maxWait?: Duration;
  };
  readonly debug?: boolean;
  /** See {@link MetricsOptions}: `false`, `true`, or `{ latency: true | n }`. */
  readonly metrics?: boolean | MetricsOptions;
}

/** A retry policy's options as config data. `"Infinity"` is accepted where `Infinity` is. */
export interface RetryConfig {
  readonly maxAttempts?: number | 'Infinity';
  readonly maxDuration?: Duration;
  readonly backoff?: BackoffKind;
  readonly delay?: Duration;
  readonly maxDelay?: Duration;
  readonly multiplier?: number;
  readonly jitter?: JitterKind;
}

/** A timeout policy's options as config data. */
export interface TimeoutConfig {
  readonly timeout: Duration;
  readonly strategy?: TimeoutStrategy;
  readonly debug?: boolean;
}

/** A bulkhead's options as config data. `queueTimeout` accepts `"Infinity"`. */
export interface BulkheadConfig {
  readonly maxConcurrent?: number;
  readonly maxQueue?: number;
  readonly queueTimeout?: Duration;
  readonly debug?: boolean;
  /** See {@link MetricsOptions}: `false`, `true`, or `{ latency: true | n }`. */
  readonly metrics?: boolean | MetricsOptions;
}

/**
 * A rate limiter's options as config data: `limit` calls per `period` (with a `burst`), or a
 * token bucket (`capacity`, `refillRate`). A named entry that gives its rate in the other form
 * than `defaults.rateLimiter` replaces the default rate instead of mixing with it.
 */
export interface RateLimiterConfig {
  readonly limit?: number;
  readonly period?: Duration;
  readonly burst?: number;
  readonly capacity?: number;
  readonly refillRate?: number;
  readonly permits?: number;
  readonly maxWait?: Duration;
  readonly debug?: boolean;
}

/** Limits on the keyed instances of each name (see `Registry.keyedCircuitBreaker`). */
export interface KeysConfig {
  /** Keys kept per keyed name before the least recently used is evicted. @default 10000 */
  readonly maxKeys?: number;
  /** A key unused this long is dropped (`"Infinity"`: never). @default "10m" */
  readonly idleTimeout?: Duration;
}

/**
 * Registry settings as plain JSON-compatible data, the shape kept in a JSON or YAML file:
 * defaults per policy kind, and named instances whose options are the defaults with their own
 * fields on top (nested objects merge field by field; a `window` of another kind replaces the
 * default one).
 *
 * @example
 * ```json
 * {
 *   "defaults": { "circuitBreaker": { "breakDuration": "30s" }, "timeout": { "timeout": "2s" } },
 *   "circuitBreakers": { "payments": { "failureRateThreshold": 0.25, "breakDuration": "1m" } },
 *   "retries": { "payments": { "maxAttempts": 4, "delay": "200ms" } },
 *   "rateLimiters": { "search": { "limit": 50, "period": "1s", "maxWait": "200ms" } },
 *   "keys": { "maxKeys": 50000, "idleTimeout": "15m" }
 * }
 * ```
 */
export interface RegistryConfig {
  readonly defaults?: {
    readonly circuitBreaker?: CircuitBreakerConfig;
    readonly retry?: RetryConfig;
    readonly timeout?: Partial<TimeoutConfig>;
    readonly bulkhead?: BulkheadConfig;
    readonly rateLimiter?: RateLimiterConfig;
  };
  readonly circuitBreakers?: Readonly<Record<string, CircuitBreakerConfig>>;
  readonly retries?: Readonly<Record<string, RetryConfig>>;
  readonly timeouts?: Readonly<Record<string, TimeoutConfig>>;
  readonly bulkheads?: Readonly<Record<string, BulkheadConfig>>;
  readonly rateLimiters?: Readonly<Record<string, RateLimiterConfig>>;
  readonly keys?: KeysConfig;
}

/** Defaults of {@link KeysConfig}. */
export const keysDefaults = Object.freeze({ maxKeys: 10_000, idleTimeout: 600_000 });

/** @internal The policy kinds a registry holds. */
export type RegistryKind = 'circuitBreaker' | 'retry' | 'timeout' | 'bulkhead' | 'rateLimiter';

/** @internal One kind's options as plain data: the policy's own keys, durations in ms. */
export type OptionsData = Record<string, unknown>;

/** @internal Config data after validation. */
export interface ValidConfig {
  /** Per kind, the defaults. */
  readonly defaults: ReadonlyMap<RegistryKind, OptionsData>;
  /** Per kind, each named entry merged over the defaults. */
  readonly named: ReadonlyMap<RegistryKind, ReadonlyMap<string, OptionsData>>;
  readonly keys: { readonly maxKeys: number; readonly idleTimeout: number };
}

// ---- schemas --------------------------------------------------------------------------------------

/** How a key's value is read: as is, as a duration, or as a nested object. */
type Field =
  | 'value'
  | 'duration'
  | 'durationOrInfinity'
  | 'countOrInfinity'
  | 'window'
  | 'metrics'
  | Schema;
// Maps, not object literals: lookups by keys taken from the data never reach a prototype.
type Schema = ReadonlyMap<string, Field>;

const schema = (fields: [string, Field][]): Schema => new Map(fields);

const WINDOW: Schema = schema([
  ['kind', 'value'],
  ['threshold', 'value'],
  ['size', 'value'],
  ['minimumCalls', 'value'],
  ['duration', 'duration'],
  ['buckets', 'value'],
]);

/** `metrics` is a boolean or an object of these fields. */
const METRICS: Schema = schema([['latency', 'value']]);

const WINDOW_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ['consecutive', ['kind', 'threshold']],
  ['count', ['kind', 'size', 'minimumCalls']],
  ['time', ['kind', 'duration', 'buckets', 'minimumCalls']],
]);

const SCHEMAS: ReadonlyMap<RegistryKind, Schema> = new Map([
  [
    'circuitBreaker',
    schema([
      ['window', 'window'],
      ['failureRateThreshold', 'value'],
      ['slowCallDuration', 'duration'],
      ['slowCallRateThreshold', 'value'],
      ['breakDuration', 'duration'],
      [
        'breakBackoff',
        schema([
          ['multiplier', 'value'],
          ['maxDuration', 'duration'],
        ]),
      ],
      [
        'halfOpen',
        schema([
          ['probes', 'value'],
          ['maxConcurrent', 'value'],
          ['successRatio', 'value'],
          ['maxWait', 'duration'],
        ]),
      ],
      ['debug', 'value'],
      ['metrics', 'metrics'],
    ]),
  ],
  [
    'retry',
    schema([
      ['maxAttempts', 'countOrInfinity'],
      ['maxDuration', 'durationOrInfinity'],
      ['backoff', 'value'],
      ['delay', 'duration'],
      ['maxDelay', 'duration'],
      ['multiplier', 'value'],
      ['jitter', 'value'],
    ]),
  ],
  [
    'timeout',
    schema([
      ['timeout', 'duration'],
      ['strategy', 'value'],
      ['debug', 'value'],
    ]),
  ],
  [
    'bulkhead',
    schema([
      ['maxConcurrent', 'value'],
      ['maxQueue', 'value'],
      ['queueTimeout', 'durationOrInfinity'],
      ['debug', 'value'],
      ['metrics', 'metrics'],
    ]),
  ],
  [
    'rateLimiter',
    schema([
      ['limit', 'value'],
      ['period', 'duration'],
      ['burst', 'value'],
      ['capacity', 'value'],
      ['refillRate', 'value'],
      ['permits', 'value'],
      ['maxWait', 'duration'],
      ['debug', 'value'],
    ]),
  ],
]);

const KEYS: Schema = schema([
  ['maxKeys', 'value'],
  ['idleTimeout', 'durationOrInfinity'],
]);

/** @internal Config section of each kind's named instances. */
export const SECTION_OF: ReadonlyMap<RegistryKind, string> = new Map([
  ['circuitBreaker', 'circuitBreakers'],
  ['retry', 'retries'],
  ['timeout', 'timeouts'],
  ['bulkhead', 'bulkheads'],
  ['rateLimiter', 'rateLimiters'],
]);

const KIND_OF_SECTION: ReadonlyMap<string, RegistryKind> = new Map(
  [...SECTION_OF].map(([kind, section]) => [section, kind]),
);

const KINDS: readonly RegistryKind[] = [
  'circuitBreaker',
  'retry',
  'timeout',
  'bulkhead',
  'rateLimiter',
];
const TOP_KEYS = [
  'defaults',
  'circuitBreakers',
  'retries',
  'timeouts',
  'bulkheads',
  'rateLimiters',
  'keys',
];

/** Keys that could reach an object's prototype if they were ever assigned through. */
const FORBIDDEN: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Options that exist in code but cannot come from data. */
const CODE_ONLY: ReadonlySet<string> = new Set([
  'clock',
  'handle',
  'handleResult',
  'initialState',
  'random',
  'retryAfter',
]);

/** Option paths whose valid range depends on another option: checked only once it is valid. */
const DEPENDS_ON: ReadonlyMap<string, readonly string[]> = new Map([
  ['halfOpen.maxConcurrent', ['halfOpen.probes']],
  ['maxDelay', ['delay']],
  ['breakBackoff.maxDuration', ['breakDuration']],
  ['window.minimumCalls', ['window.size', 'window.kind']],
  ['window.buckets', ['window.duration', 'window.kind']],
  ['window.duration', ['window.buckets', 'window.kind']],
  ['window.threshold', ['window.kind']],
  ['window.size', ['window.kind']],
  // A rate limiter's rate left out (or found invalid) is stood in for by the fastest one the
  // other fields allow, which limits nothing: only the given fields constrain each other.
  ['limit', ['period']],
  ['burst', ['period']],
  ['capacity', ['refillRate']],
  ['permits', ['burst', 'capacity']],
]);

const DURATION_OPTIONS: ReadonlySet<string> = new Set([
  'slowCallDuration',
  'breakDuration',
  'breakBackoff.maxDuration',
  'halfOpen.maxWait',
  'window.duration',
  'maxDuration',
  'delay',
  'maxDelay',
  'timeout',
  'queueTimeout',
  'period',
  'maxWait',
  'idleTimeout',
]);

// ---- reading ----------------------------------------------------------------------------------------

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

const isData = (v: unknown): v is OptionsData =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Walks untrusted data. Only own enumerable keys are read (`Object.keys`), a key that could
 * reach a prototype is reported and never followed, and results are built from the schemas'
 * own key names, so nothing is ever assigned through a key taken from the data.
 */
class Reader {
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

// ---- validation against the policies' own rules -------------------------------------------------

type Resolver = (options: OptionsData) => unknown;

const RESOLVERS: ReadonlyMap<RegistryKind, Resolver> = new Map<RegistryKind, Resolver>([
  ['circuitBreaker', (o) => resolveBreakerOptions(o)],
  ['retry', (o) => resolveRetryOptions(o)],
  // Defaults may leave the timeout out: a placeholder lets the other fields be checked.
  [
    'timeout',
    (o) =>
      resolveTimeoutOptions({ ...o, timeout: o.timeout === undefined ? 1 : o.timeout } as never),
  ],
  ['bulkhead', (o) => resolveBulkheadOptions(o)],
  ['rateLimiter', (o) => resolveRateLimiterOptions(withStandInRate(o))],
]);

/** A rate limiter's rate as `limit` calls per `period` with a `burst`. */
const LIMIT_FORM: readonly string[] = ['limit', 'period', 'burst'];
/** A rate limiter's rate as a token bucket. */
const BUCKET_FORM: readonly string[] = ['capacity', 'refillRate'];

const MAX_INT32 = 2_147_483_647;

/**
 * Rate limiter options with a stand-in for the part of the rate they leave out (the defaults
 * may leave it to the named entries), so that their other fields can be checked. The stand-in
 * is the fastest rate the given fields allow, so it limits no other field: `permits` and
 * `burst` (or `capacity`) are then checked only against what is really given.
 */
function withStandInRate(o: OptionsData): OptionsData {
  if (o.limit !== undefined || (o.capacity !== undefined && o.refillRate !== undefined)) return o;
  if (o.capacity !== undefined) return { ...o, refillRate: 1e6 };
  const rate = o.refillRate;
  if (rate !== undefined) {
    const valid = typeof rate === 'number' && rate > 0 && rate <= 1e6;
    const intervalUs = valid ? Math.round(1e6 / rate) : 1;
    const capacity = Math.floor((MAX_DURATION_MS * 1_000) / intervalUs);
    return { ...o, capacity: Math.max(1, Math.min(MAX_INT32, capacity)) };
  }
  const p = o.period;
  const period = typeof p === 'number' && p >= 1 && p <= MAX_DURATION_MS ? p : 1_000;
  return { ...o, limit: Math.min(MAX_INT32, Math.floor(period * 1_000)) };
}

/**
 * The part of a rate limiter's rate that `o` lacks, as the option to name in an issue and
 * what else is needed with it; undefined when the rate is complete (or given in both forms,
 * which the resolver reports).
 */
function missingRate(o: OptionsData): { option: string; needs: string } | undefined {
  if (o.limit !== undefined) return undefined;
  const capacity = o.capacity !== undefined;
  const refill = o.refillRate !== undefined;
  if (capacity && refill) return undefined;
  if (capacity) return { option: 'refillRate', needs: 'with `capacity`' };
  if (refill) return { option: 'capacity', needs: 'with `refillRate`' };
  return { option: 'limit', needs: '(a rate: `limit`, or `capacity` and `refillRate`)' };
}

/**
 * Runs the policy's own resolver over `options`, so the limits are exactly the policy's.
 * The resolver stops at the first bad option; each is reported, removed and the rest checked
 * again, until the options pass. `place` maps an option path to where it sits in the data.
 */
function collect(
  r: Reader,
  resolve: Resolver,
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
        failed.has(option) || DEPENDS_ON.get(option)?.some((o) => failed.has(o)) === true;
      failed.add(option);
      if (!dependent) {
        const { path, from } = place(option);
        const source = from ?? path;
        const written = r.written.has(source) ? r.written.get(source) : error.value;
        // No hint on how to write a duration that must be left out altogether.
        const durationHint =
          DURATION_OPTIONS.has(option) && !error.expected.startsWith('undefined')
            ? ' (or a string like "30s")'
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

/** Removes the option at a dotted path (or, when it is missing, its parent object). */
function removeOption(options: OptionsData, option: string): boolean {
  const [head, leaf] = option.split('.', 2) as [string, string | undefined];
  if (!Object.hasOwn(options, head)) return false;
  const parent = options[head];
  if (leaf !== undefined && isData(parent) && Object.hasOwn(parent, leaf)) delete parent[leaf];
  else delete options[head];
  return true;
}

function hasOption(options: OptionsData, option: string): boolean {
  const [head, leaf] = option.split('.', 2) as [string, string | undefined];
  if (!Object.hasOwn(options, head)) return false;
  if (leaf === undefined) return true;
  const parent = options[head];
  return isData(parent) && Object.hasOwn(parent, leaf);
}

/** A copy two levels deep, so removing options never touches the original. */
function copy(options: OptionsData): OptionsData {
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

/**
 * @internal Validates registry config data, collecting every problem (each with its path)
 * into one {@link ConfigError}. Numbers are checked by the policies' own option resolvers, so a
 * value is accepted from data exactly when the policy accepts it in code.
 */
export function validateConfig(input: unknown): ValidConfig {
  const r = new Reader();
  const defaultsData = new Map<RegistryKind, OptionsData>();
  const namedData = new Map<RegistryKind, Map<string, OptionsData>>(
    KINDS.map((k) => [k, new Map()]),
  );
  let keysData: OptionsData = {};
  const top = input === undefined ? [] : (r.entries(input, '') ?? []);
  for (const [key, value] of top) {
    if (value === undefined) continue;
    if (key === 'defaults') {
      for (const [name, options] of r.entries(value, 'defaults') ?? []) {
        const kind = KINDS.find((k) => k === name);
        if (kind === undefined) r.unknownKey(`defaults.${name}`, name, KINDS, 'policy kind');
        else if (options !== undefined) {
          defaultsData.set(kind, r.options(options, SCHEMAS.get(kind)!, `defaults.${kind}`) ?? {});
        }
      }
    } else if (key === 'keys') {
      keysData = r.options(value, KEYS, 'keys') ?? {};
    } else {
      const kind = KIND_OF_SECTION.get(key);
      if (kind === undefined) {
        r.unknownKey(key, key, TOP_KEYS, 'key');
        continue;
      }
      for (const [name, options] of r.entries(value, key) ?? []) {
        if (name === '') {
          r.issue(`${key}[""]`, 'an instance name must not be empty');
          continue;
        }
        const data = r.options(options, SCHEMAS.get(kind)!, `${key}.${name}`);
        if (data !== undefined) namedData.get(kind)!.set(name, data);
      }
    }
  }

  const defaults = new Map<RegistryKind, OptionsData>();
  const named = new Map<RegistryKind, Map<string, OptionsData>>();
  for (const kind of KINDS) {
    const resolve = RESOLVERS.get(kind)!;
    const d = copy(defaultsData.get(kind) ?? {});
    collect(r, resolve, d, (option) => ({ path: `defaults.${kind}.${option}` }));
    defaults.set(kind, d);
    const section = SECTION_OF.get(kind)!;
    const entries = new Map<string, OptionsData>();
    for (const [name, own] of namedData.get(kind)!) {
      const merged = mergeOptions(d, own);
      const at = `${section}.${name}`;
      if (kind === 'timeout' && merged.timeout === undefined) {
        r.issue(
          `${at}.timeout`,
          'is required: neither this entry nor `defaults.timeout` sets a timeout',
        );
      }
      const missing = kind === 'rateLimiter' ? missingRate(merged) : undefined;
      if (missing !== undefined) {
        r.issue(
          `${at}.${missing.option}`,
          `is required ${missing.needs}: neither this entry nor \`defaults.rateLimiter\` sets it`,
        );
      }
      collect(r, resolve, copy(merged), (option) => ({
        path: `${at}.${option}`,
        from:
          !hasOption(own, option) && hasOption(d, option)
            ? `defaults.${kind}.${option}`
            : undefined,
      }));
      entries.set(name, merged);
    }
    named.set(kind, entries);
  }

  let maxKeys: number = keysDefaults.maxKeys;
  let idleTimeout: number = keysDefaults.idleTimeout;
  collect(
    r,
    (o) => {
      maxKeys = integer(o.maxKeys, 'maxKeys', keysDefaults.maxKeys, 1, 2_147_483_647);
      idleTimeout = durationOption(o.idleTimeout, 'idleTimeout', keysDefaults.idleTimeout, 1, true);
    },
    copy(keysData),
    (option) => ({ path: `keys.${option}` }),
  );

  if (r.issues.length > 0) throw new ConfigError(r.issues);
  return { defaults, named, keys: { maxKeys, idleTimeout } };
}

/**
 * @internal The options data of instance `name` of `kind`: its entry, or the defaults for a
 * name without one. Throws {@link ConfigError} for a timeout with no duration anywhere, and
 * for a rate limiter with no rate.
 */
export function optionsFor(config: ValidConfig, kind: RegistryKind, name: string): OptionsData {
  const data = config.named.get(kind)!.get(name) ?? config.defaults.get(kind)!;
  if (kind === 'timeout' && data.timeout === undefined) {
    throw new ConfigError([
      {
        path: `timeouts.${name}.timeout`,
        message:
          'is required: there is no `timeouts` entry for this name and `defaults.timeout` sets no timeout',
      },
    ]);
  }
  const missing = kind === 'rateLimiter' ? missingRate(data) : undefined;
  if (missing !== undefined) {
    throw new ConfigError([
      {
        path: `rateLimiters.${name}.${missing.option}`,
        message: `is required ${missing.needs}: there is no \`rateLimiters\` entry for this name and \`defaults.rateLimiter\` does not set it`,
      },
    ]);
  }
  return data;
}
