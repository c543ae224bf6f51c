/**
 * RedisBulkhead on a real three-master Redis Cluster, with the cluster clients of ioredis and
 * node-redis: a bulkhead's keys share one slot (its name's), bulkheads whose names hash to
 * different nodes each work on their own node, and a waiting call is woken by pub/sub.
 */
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBulkhead, type RedisClientLike, type RedisPermit } from '../../../src/redis/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { track } from '../../support/async.js';
import { until } from '../../support/redis-bulkhead.js';
import { type ClusterNode, describeRedisCluster } from '../../support/redis-cluster.js';

const ignore = () => {};

const factories = [
  {
    kind: 'ioredis',
    async connect(port: number) {
      const client = new Cluster([{ host: '127.0.0.1', port }], {
        enableOfflineQueue: false,
        redisOptions: { maxRetriesPerRequest: 0 },
      });
      client.on('error', ignore);
      await new Promise<void>((resolve, reject) => {
        client.once('ready', resolve);
        client.once('end', () => reject(new Error('the ioredis cluster client ended')));
      });
      return { client: client as unknown as RedisClientLike, close: () => client.disconnect() };
    },
  },
  {
    kind: 'node-redis',
    async connect(port: number) {
      const client = createCluster({
        rootNodes: [{ url: `redis://127.0.0.1:${port}` }],
        defaults: { disableOfflineQueue: true },
      });
      client.on('error', ignore);
      await client.connect();
      return { client: client as unknown as RedisClientLike, close: () => client.destroy() };
    },
  },
] as const;

describeRedisCluster('RedisBulkhead on a Redis Cluster', (cluster) => {
  describe.each(factories)('with the $kind cluster client', (factory) => {
    let connected: { client: RedisClientLike; close(): void };
    const made: RedisBulkhead[] = [];
    const bulkhead = (
      name: string,
      options: Partial<{ maxQueue: number; clock: ManualClock }> = {},
    ) => {
      const b = new RedisBulkhead({
        client: connected.client,
        name,
        maxConcurrent: 2,
        timeout: 2_000,
        pollInterval: 3_600_000,
        onWarning: ignore,
        ...options,
      });
      made.push(b);
      return b;
    };

    beforeAll(async () => {
      connected = await factory.connect(cluster().nodes[0]!.port);
    });
    afterAll(() => {
      for (const b of made) b.dispose();
      connected?.close();
    });

    it('shares the limit through keys of one slot on the node of its name, on every node', async () => {
      const byNode = new Map<ClusterNode, string>();
      for (let i = 0; byNode.size < cluster().nodes.length; i++) {
        const name = `bh-${factory.kind}-${i}`;
        const node = await cluster().nodeForKey(`breakwater:{${name}}:x`);
        if (!byNode.has(node)) byNode.set(node, name);
      }
      for (const [node, name] of byNode) {
        const a = bulkhead(name);
        const b = bulkhead(name);
        const permits = [await a.acquire(), await b.acquire()];
        await expect(a.acquire()).rejects.toMatchObject({ reason: 'full' });
        expect(permits.every((p) => !p.local)).toBe(true);
        const slots = new Set(
          await Promise.all(Object.values(a.keys).map((key) => cluster().keySlot(key))),
        );
        expect(slots).toEqual(new Set([await cluster().keySlot(name)]));
        expect(await node.command('ZCARD', a.keys.permits)).toBe(2);
        await Promise.all(permits.map((p) => p.release()));
        expect(await node.command('ZCARD', a.keys.permits)).toBe(0);
      }
    });

    it('wakes a waiting call by pub/sub when another instance releases', async () => {
      const name = `wake-${factory.kind}`;
      const a = bulkhead(name, { maxQueue: 1, clock: new ManualClock() });
      const b = bulkhead(name);
      const held = [await b.acquire(), await b.acquire()];
      const waiting = track(a.acquire());
      await until(() => a.queueLength === 1);
      // Subscribed on some node of the cluster: a release on the bulkhead's node reaches it.
      for (let i = 0; i < 2_500; i++) {
        const counts = await Promise.all(
          cluster().nodes.map((n) => n.command('PUBSUB', 'NUMSUB', a.channel)),
        );
        if (counts.some((c) => (c as [string, number])[1] > 0)) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      await held[0]!.release();
      await until(() => waiting.settled);
      expect(waiting.ok).toBe(true);
      await (waiting.value as RedisPermit).release();
      await held[1]!.release();
    });
  });
});
