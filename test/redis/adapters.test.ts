/**
 * Client recognition and adapters: ioredis and node-redis clients are told apart by shape,
 * offline queues are reported, and a hand-written RedisClientAdapter is used as given.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { createClient, RESP_TYPES, type RedisClientOptions } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  adaptClient,
  clientKind,
  inspectClient,
  type RedisClientAdapter,
  RedisGcraStore,
  StoreUnavailableError,
} from '../../src/redis/index.js';
import { ioredisFactory, nodeRedisFactory } from '../support/redis-clients.js';
import { describeRedis } from '../support/redis-server.js';

/** Real, unconnected clients: recognition only looks at their shape and options. */
const ioredisClient = (options: RedisOptions = {}) => new Redis({ lazyConnect: true, ...options });
const nodeRedisClient = (options: RedisClientOptions = {}) => createClient(options);

describe('clientKind / adaptClient', () => {
  it('recognises an ioredis client, a node-redis client and an adapter', () => {
    expect(clientKind(ioredisClient())).toBe('ioredis');
    expect(clientKind(nodeRedisClient())).toBe('node-redis');
    const adapter: RedisClientAdapter = {
      evalsha: async () => [1, 0, 0, 1, 0],
      eval: async () => [1, 0, 0, 1, 0],
      scriptLoad: async () => 'sha',
    };
    expect(clientKind(adapter)).toBe('adapter');
    expect(adaptClient(adapter)).toBe(adapter);
  });

  it('recognises nothing else', () => {
    for (const value of [undefined, null, 42, 'redis://', {}, { evalsha() {} }, [], () => {}]) {
      expect(clientKind(value)).toBeUndefined();
      expect(adaptClient(value)).toBeUndefined();
    }
  });
});

describe('inspectClient', () => {
  it('reports an ioredis client with its offline queue on (the default), and not one with it off', () => {
    const [warning, ...rest] = inspectClient(ioredisClient());
    expect(rest).toEqual([]);
    expect(warning).toMatch(/ioredis client has `enableOfflineQueue: true`/);
    expect(warning).toMatch(/enableOfflineQueue: false/);
    expect(inspectClient(ioredisClient({ enableOfflineQueue: false }))).toEqual([]);
  });

  it('reports a node-redis client without disableOfflineQueue (the default), and not one with it', () => {
    const [warning, ...rest] = inspectClient(nodeRedisClient());
    expect(rest).toEqual([]);
    expect(warning).toMatch(/node-redis client has `disableOfflineQueue: false`/);
    expect(inspectClient(nodeRedisClient({ disableOfflineQueue: false }))).toHaveLength(1);
    expect(inspectClient(nodeRedisClient({ disableOfflineQueue: true }))).toEqual([]);
  });

  it('reports what an adapter reports, and nothing when it has no warnings()', () => {
    const base = {
      evalsha: async () => null,
      eval: async () => null,
      scriptLoad: async () => null,
    };
    expect(inspectClient(base)).toEqual([]);
    expect(inspectClient({ ...base, warnings: () => ['careful'] })).toEqual(['careful']);
  });
});

describe('RedisGcraStore client warnings', () => {
  it('go to onWarning at construction, each once', () => {
    const onWarning = vi.fn();
    new RedisGcraStore({ client: ioredisClient(), onWarning });
    expect(onWarning).toHaveBeenCalledTimes(1);
    expect(onWarning.mock.calls[0]![0]).toMatch(/enableOfflineQueue/);
    new RedisGcraStore({ client: ioredisClient({ enableOfflineQueue: false }), onWarning });
    expect(onWarning).toHaveBeenCalledTimes(1);
  });

  it('go to console.warn by default, once per message per process', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      new RedisGcraStore({ client: nodeRedisClient() });
      new RedisGcraStore({ client: nodeRedisClient() });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![0]).toMatch(/^breakwater\/redis: the node-redis client has/);
    } finally {
      warn.mockRestore();
    }
  });
});

describeRedis('a RedisClientAdapter of ones own', (redis) => {
  let close: () => Promise<void>;
  let adapter: RedisClientAdapter;
  const sent: string[] = [];

  beforeAll(async () => {
    // Wraps a real client, recording the commands: the way to add metrics or tracing.
    const connected = await ioredisFactory.connect(redis().port);
    close = connected.close;
    const inner = adaptClient(connected.client)!;
    adapter = {
      evalsha: (sha, keys, args) => {
        sent.push(`EVALSHA ${keys.join(' ')}`);
        return inner.evalsha(sha, keys, args);
      },
      eval: (script, keys, args) => {
        sent.push(`EVAL ${keys.join(' ')}`);
        return inner.eval(script, keys, args);
      },
      scriptLoad: (script) => {
        sent.push('SCRIPT LOAD');
        return inner.scriptLoad(script);
      },
    };
  });
  afterAll(async () => {
    await close?.();
  });

  it('is used as given: EVALSHA, then SCRIPT LOAD and EVALSHA again on NOSCRIPT', async () => {
    await redis().command('SCRIPT', 'FLUSH');
    const store = new RedisGcraStore({ client: adapter, name: 'own', prefix: 'p:' });
    expect(await store.decide('k', 1, 1_000_000, 2, 1_000_000_000)).toEqual({
      allowed: true,
      retryAfterUs: 0,
      remaining: 1,
      granted: 1,
      aheadUs: 0,
    });
    expect(await store.decide('k', 1, 1_000_000, 2, 1_000_000_000)).toMatchObject({
      allowed: true,
      remaining: 0,
    });
    expect(sent).toEqual([
      'EVALSHA p:{own}:k',
      'SCRIPT LOAD',
      'EVALSHA p:{own}:k',
      'EVALSHA p:{own}:k',
    ]);
  });

  it('falls back to EVAL when EVALSHA still finds no script after the load (a cluster node the load did not reach)', async () => {
    await redis().command('SCRIPT', 'FLUSH');
    sent.length = 0;
    // A load that lands elsewhere: it answers the SHA without loading on this server.
    const elsewhere: RedisClientAdapter = {
      ...adapter,
      scriptLoad: async (script) => {
        sent.push('SCRIPT LOAD (elsewhere)');
        const { createHash } = await import('node:crypto');
        return createHash('sha1').update(script).digest('hex');
      },
    };
    const store = new RedisGcraStore({ client: elsewhere, name: 'cluster' });
    expect(await store.decide('k', 1, 1_000_000, 2, 1_000_000_000)).toMatchObject({
      allowed: true,
    });
    expect(sent).toEqual([
      'EVALSHA breakwater:{cluster}:k',
      'SCRIPT LOAD (elsewhere)',
      'EVALSHA breakwater:{cluster}:k',
      'EVAL breakwater:{cluster}:k',
    ]);
  });

  it('a node-redis client connected to the same server decides on the same state', async () => {
    const other = await nodeRedisFactory.connect(redis().port);
    try {
      const a = new RedisGcraStore({ client: adapter, name: 'shared' });
      const b = new RedisGcraStore({ client: other.client, name: 'shared' });
      expect(await a.decide('k', 1, 1_000_000, 2, 5_000_000)).toMatchObject({ remaining: 1 });
      expect(await b.decide('k', 1, 1_000_000, 2, 5_000_000)).toMatchObject({ remaining: 0 });
      expect(await a.decide('k', 1, 1_000_000, 2, 5_000_000)).toMatchObject({ allowed: false });
    } finally {
      await other.close();
    }
  });

  it('understands integer replies mapped to strings (node-redis RESP3 typeMapping)', async () => {
    const client = createClient({
      socket: { host: '127.0.0.1', port: redis().port },
      disableOfflineQueue: true,
      RESP: 3,
      commandOptions: { typeMapping: { [RESP_TYPES.NUMBER]: String } },
    });
    await client.connect();
    try {
      expect(await client.sendCommand(['INCR', 'mapped-counter'])).toBe('1');
      const store = new RedisGcraStore({ client, name: 'mapped' });
      expect(await store.decide('k', 1, 1_000_000, 2, 5_000_000)).toEqual({
        allowed: true,
        retryAfterUs: 0,
        remaining: 1,
        granted: 1,
        aheadUs: 0,
      });
      expect(await store.decide('k', 2, 1_000_000, 2, 5_000_000)).toEqual({
        allowed: false,
        retryAfterUs: 1_000_000,
        remaining: 1,
        granted: 0,
        aheadUs: 1_000_000,
      });
    } finally {
      client.destroy();
    }
  });

  it('rejects a reply of another shape with StoreUnavailableError', async () => {
    // An adapter that runs the wrong thing: a script returning a string.
    const wrong: RedisClientAdapter = {
      evalsha: (_sha, keys) => adapter.eval("return 'hello'", keys, []),
      eval: (_script, keys) => adapter.eval("return 'hello'", keys, []),
      scriptLoad: adapter.scriptLoad,
    };
    const store = new RedisGcraStore({ client: wrong, name: 'wrong' });
    const error = await store.decide('k', 1, 1_000, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).message).toBe(
      'Store "wrong" could not decide: unexpected reply to the GCRA script: hello',
    );
    expect(store.pending).toBe(0);
  });
});
