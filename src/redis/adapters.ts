import { OptionsError } from '../errors/OptionsError.js';

/**
 * What the store needs from a Redis client, and adapters for the two common Node.js clients,
 * recognised by shape: no client library is imported, so `breakwater/redis` works with
 * either (or neither) installed.
 */

/**
 * The commands the store sends. Implement it to use a client that is not recognised, or to
 * wrap one (metrics, tracing). Replies are the client's own (an array of three integers for
 * the GCRA script); failures reject.
 */
export interface RedisClientAdapter {
  /** EVALSHA sha numkeys ...keys ...args */
  evalsha(sha: string, keys: readonly string[], args: readonly string[]): PromiseLike<unknown>;
  /** EVAL script numkeys ...keys ...args (routed by key on a cluster) */
  eval(script: string, keys: readonly string[], args: readonly string[]): PromiseLike<unknown>;
  /** SCRIPT LOAD script; resolves to the script's SHA1. */
  scriptLoad(script: string): PromiseLike<unknown>;
  /** Problems of the client's configuration for use by a store, as sentences. */
  warnings?(): readonly string[];
}

/** The members of an ioredis client (`new Redis()`, `new Cluster()`) the adapter uses. */
export interface IoredisLikeClient {
  /** Runs a loaded script by its SHA1 (`EVALSHA`). */
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): PromiseLike<unknown>;
  /** Runs a script from its source (`EVAL`). */
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): PromiseLike<unknown>;
  /** Loads a script (`SCRIPT LOAD`), answering its SHA1. */
  script(subcommand: 'LOAD', script: string): PromiseLike<unknown>;
  readonly options?: { readonly enableOfflineQueue?: boolean | undefined };
}

/** The members of a node-redis v4+ client (`createClient()`) the adapter uses. */
export interface NodeRedisLikeClient {
  /** Runs a loaded script by its SHA1 (`EVALSHA`). */
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): PromiseLike<unknown>;
  /** Runs a script from its source (`EVAL`). */
  eval(script: string, options: { keys: string[]; arguments: string[] }): PromiseLike<unknown>;
  /** Loads a script (`SCRIPT LOAD`), answering its SHA1. */
  scriptLoad(script: string): PromiseLike<unknown>;
  readonly options?: { readonly disableOfflineQueue?: boolean | undefined } | undefined;
}

/** Anything a store accepts as its `client`. */
export type RedisClientLike = RedisClientAdapter | IoredisLikeClient | NodeRedisLikeClient;

/** Which kind of client {@link adaptClient} recognised. */
export type RedisClientKind = 'adapter' | 'ioredis' | 'node-redis';

const IOREDIS_OFFLINE_QUEUE =
  'the ioredis client has `enableOfflineQueue: true` (its default): while it is disconnected, ' +
  'decisions wait in its queue until the store timeout instead of failing at once, and run ' +
  'later, using permits for calls already refused. Create it with `enableOfflineQueue: false` ' +
  '(and `maxRetriesPerRequest: 0`).';

const NODE_REDIS_OFFLINE_QUEUE =
  'the node-redis client has `disableOfflineQueue: false` (its default): while it is ' +
  'disconnected, decisions wait in its queue until the store timeout instead of failing at ' +
  'once, and run later, using permits for calls already refused. Create it with ' +
  '`disableOfflineQueue: true`.';

function has(value: object, name: string): boolean {
  return typeof (value as Record<string, unknown>)[name] === 'function';
}

/** The kind of `client`, or undefined when it is none of the recognised shapes. */
export function clientKind(client: unknown): RedisClientKind | undefined {
  if ((typeof client !== 'object' && typeof client !== 'function') || client === null) {
    return undefined;
  }
  // Checked in this order: node-redis has no `evalsha` (lower case) and ioredis no
  // `scriptLoad`, so neither client is mistaken for an adapter.
  if (has(client, 'evalsha') && has(client, 'scriptLoad') && has(client, 'eval')) return 'adapter';
  if (has(client, 'evalSha') && has(client, 'scriptLoad') && has(client, 'eval')) {
    return 'node-redis';
  }
  if (has(client, 'evalsha') && has(client, 'script') && has(client, 'eval')) return 'ioredis';
  return undefined;
}

/** Wraps an ioredis client. */
export function ioredisAdapter(client: IoredisLikeClient): RedisClientAdapter {
  return {
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (script, keys, args) => client.eval(script, keys.length, ...keys, ...args),
    scriptLoad: (script) => client.script('LOAD', script),
    warnings: () => (client.options?.enableOfflineQueue === false ? [] : [IOREDIS_OFFLINE_QUEUE]),
  };
}

/** Wraps a node-redis (v4 and later) client. */
export function nodeRedisAdapter(client: NodeRedisLikeClient): RedisClientAdapter {
  return {
    evalsha: (sha, keys, args) =>
      client.evalSha(sha, { keys: keys as string[], arguments: args as string[] }),
    eval: (script, keys, args) =>
      client.eval(script, { keys: keys as string[], arguments: args as string[] }),
    scriptLoad: (script) => client.scriptLoad(script),
    warnings: () => (offlineQueueDisabled(client) ? [] : [NODE_REDIS_OFFLINE_QUEUE]),
  };
}

/**
 * A node-redis client's `disableOfflineQueue`. A cluster client (`createCluster`) has no public
 * `options`: it keeps the settings of its node clients under `_options.defaults`, read only for
 * this warning.
 */
function offlineQueueDisabled(client: NodeRedisLikeClient): boolean {
  if (client.options !== undefined) return client.options.disableOfflineQueue === true;
  const cluster = (client as { _options?: { defaults?: { disableOfflineQueue?: unknown } } })
    ._options;
  return cluster?.defaults?.disableOfflineQueue === true;
}

/** @internal The adapter of the `client` option; {@link OptionsError} when its shape is not recognised. */
export function clientOption(client: unknown): RedisClientAdapter {
  const adapter = adaptClient(client);
  if (adapter === undefined) {
    throw new OptionsError(
      'client',
      client,
      'an ioredis client, a node-redis client or a RedisClientAdapter ' +
        '(an object with evalsha, eval and scriptLoad)',
    );
  }
  return adapter;
}

/** The adapter for `client`, or undefined when its shape is not recognised. */
export function adaptClient(client: unknown): RedisClientAdapter | undefined {
  switch (clientKind(client)) {
    case 'adapter':
      return client as RedisClientAdapter;
    case 'node-redis':
      return nodeRedisAdapter(client as NodeRedisLikeClient);
    case 'ioredis':
      return ioredisAdapter(client as IoredisLikeClient);
    default:
      return undefined;
  }
}

/**
 * Problems of `client`'s configuration for use by a store, as sentences (empty when none):
 * an offline queue left on. Stores report them through their `onWarning` option.
 */
export function inspectClient(client: RedisClientLike): readonly string[] {
  return adaptClient(client)?.warnings?.() ?? [];
}
