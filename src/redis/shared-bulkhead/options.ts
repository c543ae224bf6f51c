import type { Clock } from '../../clock/Clock.js';
import { systemClock } from '../../clock/systemClock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  boolean,
  checkOptionsObject,
  clockOption,
  duration,
  fn,
  integer,
  oneOf,
} from '../../validation/validate.js';
import { clientOption, type RedisClientAdapter, type RedisClientLike } from '../adapters.js';
import { freshInstanceId } from '../instanceId.js';
import { keyPartOption } from '../keyParts.js';
import type { StoreFailureMode } from '../rateLimiterOptions.js';
import type { RedisSubscriberAdapter } from './subscriber.js';

/** Options of {@link RedisBulkhead}. */
export interface RedisBulkheadOptions {
  /**
   * An ioredis client, a connected node-redis client, or a `RedisClientAdapter`, configured to
   * fail fast while disconnected (see the `breakwater/redis` module documentation). The
   * bulkhead never connects, quits or reconfigures it.
   */
  readonly client: RedisClientLike;
  /**
   * Where waiting calls hear that permits were freed elsewhere (Redis pub/sub): a client for
   * subscriptions only (ioredis or node-redis, connected), a {@link RedisSubscriberAdapter},
   * or `false` to rely on polling alone. By default the bulkhead opens one connection of its
   * own (a `duplicate()` of `client`, made when the first call waits, not keeping the process
   * alive, closed by `dispose`); with an adapter as `client` it polls.
   * @default a duplicate of `client`
   */
  readonly subscriber?: RedisClientLike | RedisSubscriberAdapter | false;
  /**
   * Name in errors, events and the registry, and the hash tag of its keys: 1 to 1,024
   * characters, no `{` or `}`. @default "bulkhead"
   */
  readonly name?: string;
  /** Start of every key, before the hash tag: at most 1,024 characters, no `{` or `}`. @default "breakwater:" */
  readonly prefix?: string;
  /**
   * Calls in flight at once across every process sharing the name, in [1, 2^31-1]. All of
   * them must give the same number. @default 10
   */
  readonly maxConcurrent?: number;
  /**
   * How long a permit lives in Redis without a heartbeat, in ms (at least 3 x `timeout`):
   * the bound on how long a crashed process's permits stay taken. Held permits are renewed
   * every third of it, by one script call and one timer for all of them. @default 10000
   */
  readonly lease?: number | DurationString;
  /** Calls of this process allowed to wait for a permit; 0 refuses at once when full. @default 0 */
  readonly maxQueue?: number;
  /** Longest wait for a permit, in ms, or Infinity. @default Infinity */
  readonly queueTimeout?: number | DurationString | 'Infinity';
  /**
   * While calls wait: how often, in ms, the bulkhead asks Redis again without having heard of
   * a freed permit (each wait drawn at random in [0.5, 1.5) times it), and never later than
   * the earliest lease's end. The fallback for lost pub/sub messages. @default 500
   */
  readonly pollInterval?: number | DurationString;
  /** Deadline of each script call in ms, reply included. @default 200 */
  readonly timeout?: number | DurationString;
  /**
   * How calls are admitted while Redis does not answer: `'local'` by a bulkhead in this
   * process holding its share of `maxConcurrent` (see `instances`), `'open'` all of them,
   * `'closed'` none. Calls in flight keep their permits. @default "local"
   */
  readonly onStoreFailure?: StoreFailureMode;
  /**
   * The number of processes sharing the bulkhead, for the local share while Redis is away:
   * `floor(maxConcurrent / instances)`, so the shares of all processes never sum above
   * `maxConcurrent`; 0 (every call refused or queued locally) when processes outnumber it. By
   * default the live count Redis last gave (processes whose bulkhead of this name renewed
   * within one lease); before any count, the share is 1.
   */
  readonly instances?: number;
  /** While Redis is away: how often, in ms, one call is sent to Redis to see whether it is back. @default 500 */
  readonly probeInterval?: number | DurationString;
  /**
   * This process's id in Redis (members are `<id>:<fencing token>:<slot>`).
   * @default a fresh `crypto.randomUUID()` (never drawn from `random`)
   */
  readonly instanceId?: string;
  /** Random numbers in [0, 1), for the poll jitter. @default Math.random */
  readonly random?: () => number;
  /** Receives client configuration warnings. @default console.warn, once per message */
  readonly onWarning?: (message: string) => void;
  /** @default the system clock */
  readonly clock?: Clock;
  /** Fresh errors with stack traces instead of preallocated ones. @default false */
  readonly debug?: boolean;
}

/** Defaults of {@link RedisBulkheadOptions}. */
export const redisBulkheadDefaults = Object.freeze({
  name: 'bulkhead',
  prefix: 'breakwater:',
  maxConcurrent: 10,
  lease: 10_000,
  maxQueue: 0,
  queueTimeout: Number.POSITIVE_INFINITY,
  pollInterval: 500,
  timeout: 200,
  onStoreFailure: 'local' as StoreFailureMode,
  probeInterval: 500,
});

/** @internal */
export interface ResolvedRedisBulkheadOptions {
  readonly adapter: RedisClientAdapter;
  readonly name: string;
  readonly prefix: string;
  readonly maxConcurrent: number;
  readonly lease: number;
  readonly maxQueue: number;
  readonly queueTimeout: number;
  readonly pollInterval: number;
  readonly timeout: number;
  readonly onStoreFailure: StoreFailureMode;
  readonly instances: number | undefined;
  readonly probeInterval: number;
  readonly instanceId: string;
  readonly random: () => number;
  readonly onWarning: (message: string) => void;
  readonly clock: Clock;
  readonly debug: boolean;
}

const KEYS = [
  'client',
  'subscriber',
  'name',
  'prefix',
  'maxConcurrent',
  'lease',
  'maxQueue',
  'queueTimeout',
  'pollInterval',
  'timeout',
  'onStoreFailure',
  'instances',
  'probeInterval',
  'instanceId',
  'random',
  'onWarning',
  'clock',
  'debug',
];

const MAX_INT32 = 2_147_483_647;

/** @internal Checks `options`, throwing {@link OptionsError} for the first bad one. */
export function resolveRedisBulkheadOptions(
  options: RedisBulkheadOptions,
): ResolvedRedisBulkheadOptions {
  if (options === undefined) throw new OptionsError('client', undefined, 'a Redis client');
  const o = checkOptionsObject(options, KEYS, '');
  const d = redisBulkheadDefaults;
  const adapter = clientOption(o.client);
  const name = keyPartOption(o.name, 'name', d.name, 1);
  const prefix = keyPartOption(o.prefix, 'prefix', d.prefix, 0);
  const sub = o.subscriber;
  if (
    sub !== undefined &&
    sub !== false &&
    (typeof sub !== 'object' ||
      sub === null ||
      typeof (sub as { subscribe?: unknown }).subscribe !== 'function')
  ) {
    throw new OptionsError(
      'subscriber',
      sub,
      'an ioredis or node-redis client, an object with subscribe and unsubscribe, or false',
    );
  }
  const timeout = duration(o.timeout, 'timeout', d.timeout, 1);
  const lease = duration(o.lease, 'lease', d.lease, 3 * timeout);
  const instances =
    o.instances === undefined ? undefined : integer(o.instances, 'instances', 1, 1, MAX_INT32);
  const instanceId = o.instanceId;
  if (
    instanceId !== undefined &&
    (typeof instanceId !== 'string' || instanceId.length === 0 || instanceId.length > 128)
  ) {
    throw new OptionsError('instanceId', instanceId, 'a string of 1 to 128 characters');
  }
  const random = fn<() => number>(o.random, 'random', Math.random);
  return {
    adapter,
    name,
    prefix,
    maxConcurrent: integer(o.maxConcurrent, 'maxConcurrent', d.maxConcurrent, 1, MAX_INT32),
    lease,
    maxQueue: integer(o.maxQueue, 'maxQueue', d.maxQueue, 0, MAX_INT32),
    queueTimeout: duration(o.queueTimeout, 'queueTimeout', d.queueTimeout, 1, true),
    pollInterval: duration(o.pollInterval, 'pollInterval', d.pollInterval, 1),
    timeout,
    onStoreFailure: oneOf(o.onStoreFailure, 'onStoreFailure', d.onStoreFailure, [
      'local',
      'open',
      'closed',
    ]),
    instances,
    probeInterval: duration(o.probeInterval, 'probeInterval', d.probeInterval, 1),
    instanceId: instanceId ?? freshInstanceId(),
    random,
    onWarning: fn<(message: string) => void>(o.onWarning, 'onWarning', warnOnce),
    clock: clockOption(o.clock, 'clock', systemClock),
    debug: boolean(o.debug, 'debug', false),
  };
}

const warned = new Set<string>();

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`breakwater/redis: ${message}`);
}
