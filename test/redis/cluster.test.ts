/**
 * RedisGcraStore and RedisRateLimiter on a real three-master Redis Cluster, with the cluster
 * clients of ioredis and node-redis: a limiter's keys share one slot, limiters spread over
 * nodes, decisions survive SCRIPT FLUSH on every node.
 */
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GCRA_SCRIPT_SHA,
  type GcraDecision,
  type RedisClientLike,
  RedisGcraStore,
  RedisRateLimiter,
} from '../../src/redis/index.js';
import {
  type ClusterNode,
  describeRedisCluster,
  type RedisCluster,
} from '../support/redis-cluster.js';

interface ConnectedCluster {
  readonly client: RedisClientLike;
  close(): Promise<void>;
}

interface ClusterFactory {
  readonly kind: 'ioredis' | 'node-redis';
  connect(port: number): Promise<ConnectedCluster>;
}

const ignore = () => {};

const factories: readonly ClusterFactory[] = [
  {
    kind: 'ioredis',
    async connect(port) {
      const client = new Cluster([{ host: '127.0.0.1', port }], {
        enableOfflineQueue: false,
        redisOptions: { maxRetriesPerRequest: 0 },
      });
      client.on('error', ignore);
      await new Promise<void>((resolve, reject) => {
        client.once('ready', resolve);
        client.once('end', () => reject(new Error('the ioredis cluster client ended')));
      });
      return {
        client: client as unknown as RedisClientLike,
        close: async () => {
          client.disconnect();
        },
      };
    },
  },
  {
    kind: 'node-redis',
    async connect(port) {
      const client = createCluster({
        rootNodes: [{ url: `redis://127.0.0.1:${port}` }],
        defaults: { disableOfflineQueue: true },
      });
      client.on('error', ignore);
      await client.connect();
      return {
        client: client as unknown as RedisClientLike,
        close: async () => {
          client.destroy();
        },
      };
    },
  },
];

const T0 = 1_700_000_000_000_000;
/**
 * A key lives one interval per permit it holds, in the server's real time: 10 s, so that no
 * key expires between the decisions of a burst or before the test reads it, however late a
 * busy machine runs them (with 100 ms, keys read back as null at a load average of 15).
 */
const INTERVAL_US = 10_000_000;
const BURST = 5;

/** The decisions of a GCRA from idle at T0: `BURST` admitted, then refused for one interval. */
const burstThenRefusal: GcraDecision[] = [
  ...Array.from({ length: BURST }, (_, i) => ({
    allowed: true,
    retryAfterUs: 0,
    remaining: BURST - 1 - i,
    granted: 1,
    aheadUs: i * INTERVAL_US,
  })),
  {
    allowed: false,
    retryAfterUs: INTERVAL_US,
    remaining: 0,
    granted: 0,
    aheadUs: BURST * INTERVAL_US,
  },
];

async function burstOf(store: RedisGcraStore, key: string, nowUs = T0): Promise<GcraDecision[]> {
  const results: GcraDecision[] = [];
  for (let i = 0; i <= BURST; i++) {
    results.push(await store.decide(key, 1, INTERVAL_US, BURST, nowUs));
  }
  return results;
}

/** Limiter names, `${base}-0`, `${base}-1`, ..., one for each node of the cluster. */
async function namesOnEveryNode(
  cluster: RedisCluster,
  base: string,
): Promise<Map<ClusterNode, string>> {
  const byNode = new Map<ClusterNode, string>();
  for (let i = 0; byNode.size < cluster.nodes.length; i++) {
    if (i > 1_000) throw new Error('no names found for every node');
    const name = `${base}-${i}`;
    const node = await cluster.nodeForKey(`breakwater:{${name}}:x`);
    if (!byNode.has(node)) byNode.set(node, name);
  }
  return byNode;
}

describeRedisCluster('Redis Cluster', (cluster) => {
  describe.each(factories)('with the $kind cluster client', (factory) => {
    let connected: ConnectedCluster;
    const warnings: string[] = [];
    const store = (name: string) =>
      new RedisGcraStore({
        client: connected.client,
        name,
        timeout: 2_000,
        onWarning: (message) => warnings.push(message),
      });

    beforeAll(async () => {
      connected = await factory.connect(cluster().nodes[0]!.port);
    });
    afterAll(async () => {
      await connected?.close();
    });

    it('decides many keys of one limiter (burst, then the exact retryAfterUs), all in one slot on one node', async () => {
      const name = `many-${factory.kind}`;
      const s = store(name);
      const keys = Array.from({ length: 40 }, (_, i) => `user-${i}`);
      const results = await Promise.all(keys.map((key) => burstOf(s, key)));
      for (const result of results) expect(result).toEqual(burstThenRefusal);

      const slots = new Set(
        await Promise.all(keys.map((key) => cluster().keySlot(s.redisKey(key)))),
      );
      expect(slots.size).toBe(1);
      const [slot] = slots;
      expect(slot).toBe(await cluster().keySlot(name));
      const home = await cluster().nodeForSlot(slot!);
      for (const key of keys) {
        // The TAT after BURST admissions from idle at T0.
        expect(await home.command('GET', s.redisKey(key))).toBe(String(T0 + BURST * INTERVAL_US));
      }
      for (const node of cluster().nodes) {
        const found = await node.command('KEYS', `breakwater:{${name}}:*`);
        expect((found as string[]).length).toBe(node === home ? keys.length : 0);
      }
    });

    it('serves limiters whose names hash to different nodes, each on its own node', async () => {
      const byNode = await namesOnEveryNode(cluster(), `spread-${factory.kind}`);
      expect(byNode.size).toBe(3);
      for (const [node, name] of byNode) {
        const s = store(name);
        expect(await burstOf(s, 'k')).toEqual(burstThenRefusal);
        expect(await node.command('GET', s.redisKey('k'))).toBe(String(T0 + BURST * INTERVAL_US));
        const slot = await cluster().keySlot(s.redisKey('k'));
        for (const other of cluster().nodes) {
          if (other === node) continue;
          // Another master does not hold the slot: it redirects to the node that does.
          const reply = await other.command('GET', s.redisKey('k'));
          expect(String(reply)).toBe(`Error: MOVED ${slot} 127.0.0.1:${node.port}`);
        }
      }
    });

    it('keeps deciding with no failure after SCRIPT FLUSH on every node', async () => {
      const byNode = await namesOnEveryNode(cluster(), `flush-${factory.kind}`);
      const stores = [...byNode.values()].map(store);
      // Loaded and used everywhere first, so the flush really removes a cached script.
      for (const s of stores) await s.decide('warm', 1, INTERVAL_US, BURST, T0);
      for (const node of cluster().nodes) {
        expect(await node.command('SCRIPT', 'FLUSH')).toBe('OK');
        expect(await node.command('SCRIPT', 'EXISTS', GCRA_SCRIPT_SHA)).toEqual([0]);
      }

      const outcomes = await Promise.allSettled(
        stores.flatMap((s) => Array.from({ length: 10 }, (_, i) => burstOf(s, `after-flush-${i}`))),
      );
      const failures = outcomes.filter((o) => o.status === 'rejected');
      expect(failures.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([]);
      for (const o of outcomes) {
        expect((o as PromiseFulfilledResult<GcraDecision[]>).value).toEqual(burstThenRefusal);
      }
      // Each master that serves one of the limiters has the script in its cache again.
      for (const node of cluster().nodes) {
        expect(await node.command('SCRIPT', 'EXISTS', GCRA_SCRIPT_SHA)).toEqual([1]);
      }
    });

    it('RedisRateLimiter on the cluster client admits the burst and refuses the next call', async () => {
      const name = `limiter-${factory.kind}`;
      const limiter = new RedisRateLimiter({
        client: connected.client,
        name,
        limit: 5,
        // One permit per 12 s: none is freed while the test runs.
        period: 60_000,
        burst: 5,
        timeout: 2_000,
        onStoreFailure: 'closed',
        onWarning: (message) => warnings.push(message),
      });
      try {
        const waits: number[] = [];
        for (let i = 0; i < 5; i++) waits.push(await limiter.tryAcquire('client-1'));
        expect(waits).toEqual([0, 0, 0, 0, 0]);
        const refused = await limiter.tryAcquire('client-1');
        expect(refused).toBeGreaterThan(0);
        expect(refused).toBeLessThanOrEqual(12_000);
        const stats = limiter.stats();
        expect(stats).toMatchObject({ admitted: 5, rejected: 1, fallbackDecisions: 0 });
        expect(limiter.storeAvailable).toBe(true);
        const home = await cluster().nodeForKey(limiter.store.redisKey('client-1'));
        expect(await home.command('EXISTS', limiter.store.redisKey('client-1'))).toBe(1);
      } finally {
        limiter.dispose();
      }
    });

    it('raises no offline-queue warning for a cluster client created to fail fast', () => {
      expect(warnings).toEqual([]);
    });
  });
});
