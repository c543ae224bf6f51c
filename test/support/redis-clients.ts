/**
 * The two clients the Redis store supports, created with the options breakwater/redis
 * recommends, so every store test runs against both (`describe.each(clients)`).
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import type { RedisClientLike } from '../../src/redis/index.js';

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
