import { OptionsError } from '../errors/OptionsError.js';
import {
  type RateLimiterOptions,
  type ResolvedRateLimiterOptions,
  resolveRateLimiterOptions,
} from '../policies/rate-limiter/options.js';
import type { DurationString } from '../protocol/kind.js';
import { duration, integer, keyError, numberIn, oneOf } from '../validation/validate.js';
import type { RedisClientLike } from './adapters.js';

/**
 * What a {@link RedisRateLimiter} does while Redis does not answer:
 * - `'local'`: decides with an in-process limiter holding `localShare` of the rate, each key
 *   starting from the state Redis last gave for it;
 * - `'open'`: admits every call;
 * - `'closed'`: refuses every call.
 */
export type StoreFailureMode = 'local' | 'open' | 'closed';

/** Options of {@link RedisRateLimiter}: the rate, as for `RateLimiter`, and where it lives. */
export interface RedisRateLimiterOptions extends Omit<RateLimiterOptions, 'permits'> {
  /**
   * An ioredis client, a connected node-redis client, or an adapter. Configure it to fail
   * fast while disconnected (see the `breakwater/redis` module documentation).
   */
  readonly client: RedisClientLike;
  /** Start of every Redis key. @default "breakwater:" */
  readonly prefix?: string;
  /**
   * Deadline of each decision in ms, reply included; a decision without a reply by then is
   * made by `onStoreFailure`. Far above a reply's usual time, so that a busy machine does not
   * trip it. @default 200
   */
  readonly timeout?: number | DurationString;
  /**
   * How a decision Redis does not answer is made. When decisions have failed for `timeout` ms
   * in a row, every call is decided this way until Redis answers a probe. @default "local"
   */
  readonly onStoreFailure?: StoreFailureMode;
  /**
   * With `onStoreFailure: 'local'`: the share of the rate (and of the burst) this process
   * admits on its own while Redis is away, in (0, 1]. Set it to 1 / the number of processes
   * sharing the limit. @default 1
   */
  readonly localShare?: number;
  /**
   * While Redis is away: how often, in ms, one decision (the probe) is sent to Redis again; no
   * other goes until it is answered or fails. @default 500
   */
  readonly probeInterval?: number | DurationString;
  /**
   * Refuse a key locally, without a round trip, until the time its last refusal said, for the
   * permits that cannot be free before then (it can only refuse what Redis would). @default true
   */
  readonly negativeCache?: boolean;
  /** Keys remembered by the negative cache, the leases and the local fallback. @default 100000 */
  readonly maxKeys?: number;
  /**
   * Lease mode for hot keys: a decision on a key with a backlog takes up to `lease` permits in
   * one round trip and this process spends the extra ones itself, without asking Redis. It
   * never admits more than Redis would: leased permits are spent only while the key's backlog
   * at the lease lasts. Permits left when it ends are lost (at most `lease - 1` per round trip).
   * Leased permits count as taken from the moment Redis grants them: the `remaining` of
   * `decide` never includes those this process still holds. 1 turns it off. @default 1
   */
  readonly lease?: number;
  /** Receives client configuration warnings. @default console.warn, once per message */
  readonly onWarning?: (message: string) => void;
  /**
   * The key a call through a pipeline (or `execute`) takes its permit from: one limit for
   * every such call, shared by all processes. `tryAcquire(key)` and `acquire(key)` name their
   * own. @default ""
   */
  readonly key?: string;
}

/** Defaults of {@link RedisRateLimiterOptions} beyond those of the rate limiter. */
export const redisRateLimiterDefaults = Object.freeze({
  timeout: 200,
  onStoreFailure: 'local' as StoreFailureMode,
  localShare: 1,
  probeInterval: 500,
  negativeCache: true,
  maxKeys: 100_000,
  lease: 1,
  key: '',
});

/** The options of {@link RedisRateLimiterOptions} beyond those of the rate limiter. */
const REDIS_LIMITER_KEYS = [
  'client',
  'prefix',
  'timeout',
  'onStoreFailure',
  'localShare',
  'probeInterval',
  'negativeCache',
  'maxKeys',
  'lease',
  'onWarning',
  'key',
];

/** @internal {@link RedisRateLimiterOptions} checked, with their defaults (the store's apart). */
export interface ResolvedRedisLimiterOptions {
  /** The rate, as for `RateLimiter`. */
  readonly rate: ResolvedRateLimiterOptions;
  readonly onStoreFailure: StoreFailureMode;
  readonly localShare: number;
  readonly probeInterval: number;
  readonly maxKeys: number;
  readonly negativeCache: boolean;
  readonly lease: number;
  readonly key: string;
}

/**
 * @internal Checks the options of a {@link RedisRateLimiter} but those its store checks
 * (client, prefix, timeout, onWarning), throwing {@link OptionsError} for the first bad one.
 */
export function resolveRedisLimiterOptions(
  options: RedisRateLimiterOptions,
): ResolvedRedisLimiterOptions {
  const rate = resolveRateLimiterOptions(options, REDIS_LIMITER_KEYS);
  const d = redisRateLimiterDefaults;
  const onStoreFailure = oneOf(options.onStoreFailure, 'onStoreFailure', d.onStoreFailure, [
    'local',
    'open',
    'closed',
  ]);
  const localShare = numberIn(options.localShare, 'localShare', d.localShare, 0, 1, true);
  const probeInterval = duration(options.probeInterval, 'probeInterval', d.probeInterval, 1);
  const maxKeys = integer(options.maxKeys, 'maxKeys', d.maxKeys, 1, 2_147_483_647);
  if (options.negativeCache !== undefined && typeof options.negativeCache !== 'boolean') {
    throw new OptionsError('negativeCache', options.negativeCache, 'a boolean');
  }
  const negativeCache = options.negativeCache !== false;
  const lease = integer(options.lease, 'lease', d.lease, 1, rate.burst);
  const key = options.key ?? d.key;
  const badKey = keyError(key);
  if (badKey !== undefined) throw badKey;
  return { rate, onStoreFailure, localShare, probeInterval, maxKeys, negativeCache, lease, key };
}
