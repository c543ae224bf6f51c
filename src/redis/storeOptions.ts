import type { Clock } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { OptionsError } from '../errors/OptionsError.js';
import type { DurationString } from '../protocol/kind.js';
import { checkOptionsObject, clockOption, duration, fn, keyError } from '../validation/validate.js';
import { clientOption, type RedisClientAdapter, type RedisClientLike } from './adapters.js';

/** Options of {@link RedisGcraStore}. */
export interface RedisGcraStoreOptions {
  /**
   * An ioredis client (`new Redis(...)`), a node-redis v4+ client (`createClient(...)`, connected),
   * or a {@link RedisClientAdapter}. The store never connects, quits or reconfigures it.
   * Recommended client options (see the module documentation): ioredis
   * `enableOfflineQueue: false, maxRetriesPerRequest: 0` and a `retryStrategy` capped at
   * 500 ms; node-redis `disableOfflineQueue: true` and a `reconnectStrategy` capped likewise.
   */
  readonly client: RedisClientLike;
  /**
   * The rate limiter's name: the hash tag of its keys. Non-empty, without `{` or `}`.
   * @default "rateLimiter"
   */
  readonly name?: string;
  /** Start of every key, before the hash tag; may be empty; without `{` or `}`. @default "breakwater:" */
  readonly prefix?: string;
  /**
   * Deadline of each decision in ms, from the call to the reply, reloading the script
   * included. A decision without a reply by then rejects with {@link StoreTimeoutError}.
   * The default is far above a reply's usual time (well under 1 ms on a local network), so
   * that a GC pause, a saturated CPU or a slow command on the server does not trip it.
   * @default 200
   */
  readonly timeout?: number | DurationString;
  /**
   * Receives each problem of the client's configuration (an offline queue left on) once, at
   * construction. @default console.warn, once per message per process
   */
  readonly onWarning?: (message: string) => void;
  /** Clock of the deadlines. @default the system clock */
  readonly clock?: Clock;
}

/** Defaults of {@link RedisGcraStoreOptions}. */
export const redisGcraStoreDefaults = Object.freeze({
  name: 'rateLimiter',
  prefix: 'breakwater:',
  timeout: 200,
});

/**
 * The largest `permits * intervalUs` and `burst * intervalUs` (2^50 us, about 35 years): with
 * `nowUs` below 2^52 every value the script computes stays below 2^53, where doubles (Lua's
 * numbers) are exact integers.
 */
export const MAX_SPAN_US = 2 ** 50;
/** The largest `nowUs` (2^52 us since the epoch: the year 2112). */
export const MAX_NOW_US = 2 ** 52;

/** @internal {@link RedisGcraStoreOptions} checked, with their defaults. */
export interface ResolvedStoreOptions {
  readonly adapter: RedisClientAdapter;
  readonly name: string;
  readonly prefix: string;
  readonly timeout: number;
  readonly onWarning: (message: string) => void;
  readonly clock: Clock;
}

/** @internal Checks `options`, throwing {@link OptionsError} for the first bad one. */
export function resolveStoreOptions(options: RedisGcraStoreOptions): ResolvedStoreOptions {
  if (options === undefined) throw new OptionsError('client', undefined, 'a Redis client');
  const o = checkOptionsObject(
    options,
    ['client', 'name', 'prefix', 'timeout', 'onWarning', 'clock'],
    '',
  );
  const adapter = clientOption(o.client);
  const name = o.name === undefined ? redisGcraStoreDefaults.name : o.name;
  if (typeof name !== 'string' || name.length === 0 || hasBrace(name)) {
    throw new OptionsError('name', name, 'a non-empty string without `{` or `}`');
  }
  const prefix = o.prefix === undefined ? redisGcraStoreDefaults.prefix : o.prefix;
  if (typeof prefix !== 'string' || hasBrace(prefix)) {
    throw new OptionsError('prefix', prefix, 'a string without `{` or `}`');
  }
  const timeout = duration(o.timeout, 'timeout', redisGcraStoreDefaults.timeout, 1);
  const onWarning = fn<(message: string) => void>(o.onWarning, 'onWarning', warnOnce);
  const clock = clockOption(o.clock, 'clock', systemClock);
  return { adapter, name, prefix, timeout, onWarning, clock };
}

/**
 * @internal The error for arguments of `RedisGcraStore.decide` that are out of range, or
 * undefined when they are all fine.
 */
export function decideArgumentsError(
  key: unknown,
  permits: number,
  intervalUs: number,
  burst: number,
  nowUs: number | undefined,
  lease: number | undefined,
): OptionsError | undefined {
  const badKey = keyError(key);
  if (badKey !== undefined) return badKey;
  if (!Number.isSafeInteger(intervalUs) || intervalUs < 1 || intervalUs > MAX_SPAN_US) {
    return new OptionsError('intervalUs', intervalUs, `an integer in [1, ${MAX_SPAN_US}]`);
  }
  const maxCount = Math.floor(MAX_SPAN_US / intervalUs);
  if (!Number.isSafeInteger(permits) || permits < 1 || permits > maxCount) {
    return new OptionsError(
      'permits',
      permits,
      `an integer in [1, ${maxCount}] (2^50 / intervalUs)`,
    );
  }
  if (!Number.isSafeInteger(burst) || burst < 1 || burst > maxCount) {
    return new OptionsError('burst', burst, `an integer in [1, ${maxCount}] (2^50 / intervalUs)`);
  }
  if (nowUs !== undefined && (!Number.isSafeInteger(nowUs) || nowUs < 0 || nowUs > MAX_NOW_US)) {
    return new OptionsError('nowUs', nowUs, `an integer in [0, ${MAX_NOW_US}] or undefined`);
  }
  if (
    lease !== undefined &&
    (!Number.isSafeInteger(lease) || lease < permits || lease > maxCount)
  ) {
    return new OptionsError('lease', lease, `an integer in [${permits}, ${maxCount}] or undefined`);
  }
  return undefined;
}

const warned = new Set<string>();

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`breakwater/redis: ${message}`);
}

function hasBrace(s: string): boolean {
  return s.includes('{') || s.includes('}');
}
