/**
 * The two clients the Redis store supports, created with the options breakwater/redis
 * recommends, so every store test runs against both (`describe.each(clients)`), and the
 * per-test client and limiters of a `describe.each(clients)` block.
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterEach, beforeEach } from 'vitest';
import {
  type RedisClientLike,
  RedisRateLimiter,
  type RedisRateLimiterOptions,
} from '../../src/redis/index.js';
import type { RedisServer } from './redis-server.js';

export interface ConnectedClient {
  readonly client: RedisClientLike;
  /** Closes the connection at once (pending commands fail). */
  close(): Promise<void>;
}

export interface ClientFactory {
  readonly kind: 'ioredis' | 'node-redis';
  /** A client connected to `port` and ready for commands. */
  connect(port: number): Promise<ConnectedClient>;
}

/** Reconnect delay of the test clients: short, so tests of an outage stay short. */
export const RECONNECT_MS = 50;

const ignore = () => {};

export const ioredisFactory: ClientFactory = {
  kind: 'ioredis',
  async connect(port) {
    const client = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => RECONNECT_MS,
    });
    // Connection errors during an outage are expected; the store reports them per decision.
    client.on('error', ignore);
    await client.connect();
    return {
      client,
      close: async () => {
        client.disconnect(false);
      },
    };
  },
};

export const nodeRedisFactory: ClientFactory = {
  kind: 'node-redis',
  async connect(port) {
    const client = createClient({
      socket: { host: '127.0.0.1', port, reconnectStrategy: () => RECONNECT_MS },
      disableOfflineQueue: true,
    });
    client.on('error', ignore);
    await client.connect();
    return {
      client,
      close: async () => {
        client.destroy();
      },
    };
  },
};

export const clients: readonly ClientFactory[] = [ioredisFactory, nodeRedisFactory];

/**
 * Connects a client of `factory` before each test of the calling block (restarting the server
 * first if a test stopped it) and closes it after; returns the current test's client.
 */
export function clientForEachTest(
  redis: () => RedisServer,
  factory: ClientFactory,
): () => RedisClientLike {
  let connected: ConnectedClient | undefined;
  beforeEach(async () => {
    if (!redis().running) await redis().restart();
    connected = await factory.connect(redis().port);
  });
  afterEach(async () => {
    await connected?.close();
  });
  return () => connected!.client;
}

/**
 * `clientForEachTest`, and a maker of rate limiters on that client, named
 * `<prefix>-<client kind>-<n>`, with warnings silenced; they are disposed after each test,
 * before the client closes.
 */
export function limitersForEachTest(
  redis: () => RedisServer,
  factory: ClientFactory,
  prefix: string,
) {
  const client = clientForEachTest(redis, factory);
  let run = 0;
  const made: RedisRateLimiter[] = [];
  afterEach(() => {
    for (const l of made.splice(0)) l.dispose();
  });
  const limiter = (
    options: Omit<RedisRateLimiterOptions, 'client' | 'name'> & { name?: string },
    /** Wraps the test's client (say, to run the script at a manual clock's time). */
    wrap: (client: RedisClientLike) => RedisClientLike = (c) => c,
  ) => {
    const l = new RedisRateLimiter({
      client: wrap(client()),
      name: `${prefix}-${factory.kind}-${++run}`,
      onWarning: () => {},
      ...options,
    } as RedisRateLimiterOptions);
    made.push(l);
    return l;
  };
  return { client, limiter };
}
