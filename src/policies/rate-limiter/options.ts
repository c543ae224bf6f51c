import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  checkOptionsObject,
  duration,
  integer,
  MAX_DURATION_MS,
  numberIn,
} from '../../validation/validate.js';
import { DEBUGGED_KEYS, type ResolvedDebugged, resolveDebugged } from '../shared/commonOptions.js';

/**
 * Options of {@link RateLimiter}: a rate as `limit` calls per `period` with a `burst`, or as a
 * token bucket (`capacity`, `refillRate`). Both describe the same GCRA limiter: `burst` (or
 * `capacity`) calls are admitted at once from idle, then one every `period / limit` ms (or
 * `1000 / refillRate` ms).
 *
 * @example
 * ```ts
 * rateLimiter({ limit: 100, period: 1_000 });           // 100 per second, 100 at once
 * rateLimiter({ limit: 10, period: 1_000, burst: 1 });  // evenly spaced: one per 100 ms
 * rateLimiter({ capacity: 20, refillRate: 5 });         // a bucket of 20 tokens, 5 per second
 * ```
 */
export interface RateLimiterOptions {
  /** Calls admitted per `period` on average, an integer in [1, 2^31-1]. */
  readonly limit?: number;
  /** The period of `limit` in ms. @default 1000 */
  readonly period?: number | DurationString;
  /** Calls admitted at once from idle, an integer in [1, 2^31-1]. @default limit */
  readonly burst?: number;
  /** Token bucket form: tokens the bucket holds (calls admitted at once from idle). */
  readonly capacity?: number;
  /** Token bucket form: tokens added per second, a number > 0. */
  readonly refillRate?: number;
  /** Permits one call through a pipeline takes, in [1, burst]. @default 1 */
  readonly permits?: number;
  /**
   * Longest a call through a pipeline (and `acquire` unless told otherwise) waits for its turn,
   * in ms; 0 refuses at once when no permit is free. @default 0
   */
  readonly maxWait?: number | DurationString;
  /** Name used in errors and events. @default "rateLimiter" */
  readonly name?: string;
  /** @default the system clock */
  readonly clock?: Clock;
  /** Fresh errors with stack traces instead of preallocated ones. @default false */
  readonly debug?: boolean;
}

/** Defaults of {@link RateLimiterOptions}. */
export const rateLimiterDefaults = Object.freeze({
  period: 1_000,
  permits: 1,
  maxWait: 0,
  name: 'rateLimiter',
});

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedRateLimiterOptions extends ResolvedDebugged {
  /** Microseconds between two permits (the GCRA emission interval), an integer >= 1. */
  intervalUs: number;
  burst: number;
  permits: number;
  maxWait: number;
}

const MAX_INT32 = 2_147_483_647;
const KEYS = [
  'limit',
  'period',
  'burst',
  'capacity',
  'refillRate',
  'permits',
  'maxWait',
  ...DEBUGGED_KEYS,
];

/** @internal */
export function resolveRateLimiterOptions(
  options: RateLimiterOptions | undefined,
  extraKeys: readonly string[] = [],
): ResolvedRateLimiterOptions {
  const o = checkOptionsObject(options, [...KEYS, ...extraKeys], '') as RateLimiterOptions;
  const bucket = o.capacity !== undefined || o.refillRate !== undefined;
  if (bucket && (o.limit !== undefined || o.period !== undefined || o.burst !== undefined)) {
    const mixed = o.limit !== undefined ? 'limit' : o.period !== undefined ? 'period' : 'burst';
    throw new OptionsError(
      mixed,
      o[mixed],
      'not set together with capacity/refillRate (a rate is either limit/period/burst or a token bucket)',
    );
  }
  let intervalUs: number;
  let burst: number;
  if (bucket) {
    if (o.capacity === undefined) {
      throw new OptionsError('capacity', undefined, `an integer in [1, ${MAX_INT32}]`);
    }
    burst = integer(o.capacity, 'capacity', 0, 1, MAX_INT32);
    const rate = numberIn(o.refillRate, 'refillRate', Number.NaN, 0, 1e6, true);
    if (Number.isNaN(rate)) {
      throw new OptionsError(
        'refillRate',
        undefined,
        'a number of tokens per second in (0, 1000000]',
      );
    }
    intervalUs = Math.round(1e6 / rate);
  } else {
    if (o.limit === undefined) {
      throw new OptionsError(
        'limit',
        undefined,
        `an integer in [1, ${MAX_INT32}] (or capacity and refillRate)`,
      );
    }
    const limit = integer(o.limit, 'limit', 0, 1, MAX_INT32);
    const period = duration(o.period, 'period', rateLimiterDefaults.period, 1);
    if ((period * 1_000) / limit < 1) {
      throw new OptionsError(
        'limit',
        limit,
        `an integer in [1, ${period * 1_000}]: more than one call per microsecond cannot be timed`,
      );
    }
    intervalUs = Math.round((period * 1_000) / limit);
    burst = integer(o.burst, 'burst', limit, 1, MAX_INT32);
  }
  const maxBurst = Math.floor((MAX_DURATION_MS * 1_000) / intervalUs);
  if (burst > maxBurst) {
    throw new OptionsError(
      bucket ? 'capacity' : 'burst',
      burst,
      `an integer in [1, ${maxBurst}] (a burst spans at most ${MAX_DURATION_MS} ms of the rate)`,
    );
  }
  return {
    intervalUs,
    burst,
    permits: integer(o.permits, 'permits', rateLimiterDefaults.permits, 1, burst),
    maxWait: duration(o.maxWait, 'maxWait', rateLimiterDefaults.maxWait, 0),
    ...resolveDebugged(o, rateLimiterDefaults.name),
  };
}
