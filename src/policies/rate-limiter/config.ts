import {
  type ConfigSchema,
  configSchema,
  type Duration,
  type MissingOption,
  type MissingOptionContext,
  type OptionsData,
} from '../../protocol/kind.js';
import { MAX_DURATION_MS } from '../../validation/validate.js';
import { type RateLimiterOptions, resolveRateLimiterOptions } from './options.js';

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

/** @internal The keys of a rate limiter's options in config data. */
export const rateLimiterSchema: ConfigSchema = configSchema([
  ['limit', 'value'],
  ['period', 'duration'],
  ['burst', 'value'],
  ['capacity', 'value'],
  ['refillRate', 'value'],
  ['permits', 'value'],
  ['maxWait', 'duration'],
  ['debug', 'value'],
]);

/**
 * @internal A rate left out (or found invalid) is stood in for by the fastest one the other
 * fields allow, which limits nothing: only the given fields constrain each other.
 */
export const rateLimiterDependsOn: ReadonlyMap<string, readonly string[]> = new Map([
  ['limit', ['period']],
  ['burst', ['period']],
  ['capacity', ['refillRate']],
  ['permits', ['burst', 'capacity']],
]);

/** A rate limiter's rate as `limit` calls per `period` with a `burst`. */
const LIMIT_FORM: readonly string[] = ['limit', 'period', 'burst'];
/** A rate limiter's rate as a token bucket. */
const BUCKET_FORM: readonly string[] = ['capacity', 'refillRate'];

/** @internal A rate given in the other form than the default's replaces the default rate. */
export function mergeRate(_defaults: OptionsData, named: OptionsData, merged: OptionsData): void {
  const sets = (key: string) => named[key] !== undefined;
  const drop = (keys: readonly string[]) => {
    for (const key of keys) if (!sets(key)) delete merged[key];
  };
  if (sets('limit')) drop(BUCKET_FORM);
  if (BUCKET_FORM.some(sets)) drop(LIMIT_FORM);
}

const MAX_INT32 = 2_147_483_647;

/**
 * @internal Checks options data that may leave the rate to the named entries (the defaults),
 * with a stand-in for the part of the rate left out: the fastest rate the given fields allow,
 * so it limits no other field, and `permits` and `burst` (or `capacity`) are checked only
 * against what is really given.
 */
export function checkRateData(o: OptionsData): void {
  resolveRateLimiterOptions(withStandInRate(o) as RateLimiterOptions);
}

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
 * @internal The part of the rate that `o` lacks, named with what else is needed with it;
 * undefined when the rate is complete (or given in both forms, which the resolver reports).
 */
export function missingRate(
  o: OptionsData,
  { entry, defaults, section }: MissingOptionContext,
): MissingOption | undefined {
  if (o.limit !== undefined) return undefined;
  const capacity = o.capacity !== undefined;
  const refill = o.refillRate !== undefined;
  if (capacity && refill) return undefined;
  const [option, needs] = capacity
    ? ['refillRate', 'with `capacity`']
    : refill
      ? ['capacity', 'with `refillRate`']
      : ['limit', '(a rate: `limit`, or `capacity` and `refillRate`)'];
  const source = entry
    ? `neither this entry nor \`${defaults}\` sets it`
    : `there is no \`${section}\` entry for this name and \`${defaults}\` does not set it`;
  return { option, message: `is required ${needs}: ${source}` };
}
