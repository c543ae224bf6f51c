import { describeValue } from '../../errors/describeValue.js';
import { OptionsError } from '../../errors/OptionsError.js';
import { resolveBulkheadOptions } from '../../policies/bulkhead/options.js';
import { resolveBreakerOptions } from '../../policies/circuit-breaker/options.js';
import { resolveRateLimiterOptions } from '../../policies/rate-limiter/options.js';
import { resolveRetryOptions } from '../../policies/retry/options.js';
import { resolveTimeoutOptions } from '../../policies/timeout/options.js';
import { duration as durationOption, integer, MAX_DURATION_MS } from '../../validation/validate.js';
import { ConfigError } from '../ConfigError.js';
import { copy, isData, mergeOptions, Reader } from './read.js';
import { KEYS, KIND_OF_SECTION, KINDS, SCHEMAS, SECTION_OF, TOP_KEYS } from './schema.js';
import { keysDefaults, type OptionsData, type RegistryKind, type ValidConfig } from './types.js';

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
