/**
 * Rate-limiter state in Redis: the GCRA decision as one Lua script on one key per limited
 * key, for ioredis and node-redis clients (recognised by shape; neither is a dependency).
 *
 * Recommended client options, so that a decision fails at once while the client is
 * disconnected instead of waiting in a queue and running late, and reaches Redis again soon
 * after it is back:
 * - ioredis: `new Redis({ lazyConnect: true, enableOfflineQueue: false,
 *   maxRetriesPerRequest: 0, retryStrategy: (times) => Math.min(times * 50, 500) })` and
 *   `await client.connect()` before the first decision (until it is ready every command
 *   fails). Its default `retryStrategy` backs off to 5 s plus jitter: the limiter would come
 *   back seconds after Redis does.
 * - node-redis: `createClient({ disableOfflineQueue: true, socket: { reconnectStrategy: (n)
 *   => Math.min(n * 50, 500) } })` and `await client.connect()`.
 * Both emit `error` events while disconnected: give them a listener.
 *
 * Keys are `${prefix}{${name}}:${key}`: the hash tag `{name}` puts all the keys of one
 * limiter in one cluster slot.
 * @packageDocumentation
 */
export type { RateLimitDecision } from '../policies/rate-limiter/decision.js';
export {
  adaptClient,
  clientKind,
  type IoredisLikeClient,
  inspectClient,
  ioredisAdapter,
  type NodeRedisLikeClient,
  nodeRedisAdapter,
  type RedisClientAdapter,
  type RedisClientKind,
  type RedisClientLike,
} from './adapters.js';
export {
  isStoreError,
  StoreError,
  StoreErrorCode,
  StoreTimeoutError,
  StoreUnavailableError,
} from './errors.js';
export { redisRateLimiterKind } from './kind.js';
export { redisRateLimiterFamilies } from './metrics.js';
export { RedisGcraStore } from './RedisGcraStore.js';
export {
  RedisRateLimiter,
  type RedisRateLimiterStats,
  type StoreStateEvent,
} from './RedisRateLimiter.js';
export {
  type RedisRateLimiterOptions,
  redisRateLimiterDefaults,
  type StoreFailureMode,
} from './rateLimiterOptions.js';
export { GCRA_SCRIPT, GCRA_SCRIPT_SHA, type GcraDecision } from './script.js';
export * from './shared-breaker/index.js';
export { redisBulkheadKind } from './shared-bulkhead/kind.js';
export { redisBulkheadFamilies } from './shared-bulkhead/metrics.js';
export {
  type RedisBulkheadOptions,
  redisBulkheadDefaults,
} from './shared-bulkhead/options.js';
export {
  PermitLostError,
  type PermitLostEvent,
  type RedisPermit,
} from './shared-bulkhead/permit.js';
export {
  RedisBulkhead,
  type RedisBulkheadStats,
  redisBulkhead,
} from './shared-bulkhead/RedisBulkhead.js';
export * from './shared-bulkhead/scripts.js';
export type { RedisSubscriberAdapter } from './shared-bulkhead/subscriber.js';
export {
  MAX_NOW_US,
  MAX_SPAN_US,
  type RedisGcraStoreOptions,
  redisGcraStoreDefaults,
} from './storeOptions.js';
