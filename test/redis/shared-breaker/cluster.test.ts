/**
 * Shared breaker signals on a real three-master Redis Cluster, with the cluster clients of
 * ioredis and node-redis: every script touches one slot (no CROSSSLOT), names spread over the
 * nodes, and quorum, poll, probe lease and outcome work on each node, by polling (pub/sub off).
 */
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CircuitBreaker, pipeline, systemClock } from '../../../src/index.js';
import { type RedisClientLike, sharedSignals } from '../../../src/redis/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { sleep } from '../../support/async.js';
import { fail, refusal, succeed } from '../../support/breaker.js';
import { describeRedisCluster } from '../../support/redis-cluster.js';

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
      await new Promise<void>((resolve) => client.once('ready', resolve));
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

async function until(cond: () => boolean, limitMs = 5_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) return false;
    await sleep(5);
  }
  return true;
}

describeRedisCluster('shared breaker signals on Redis Cluster', (cluster) => {
  describe.each(factories)('with the $kind cluster client', (factory) => {
    let connected: Awaited<ReturnType<(typeof factories)[number]['connect']>>;
    beforeAll(async () => {
      connected = await factory.connect(cluster().nodes[0]!.port);
    });
    afterAll(() => connected.close());

    it('on a name served by each node: quorum 2 opens every instance at its poll; a lease, a probe and its outcome', async () => {
      const names = new Map<string, string>();
      for (let i = 0; names.size < cluster().nodes.length; i++) {
        const name = `cl-${factory.kind}-${process.pid}-${i}`;
        const node = await cluster().nodeForKey(`breakwater:breaker:{${name}}:state`);
        if (!names.has(node.url)) names.set(node.url, name);
      }
      for (const name of names.values()) {
        const clock = new ManualClock();
        const list = [0, 1, 2].map((i) => {
          const breaker = new CircuitBreaker({
            name,
            clock,
            window: { kind: 'consecutive', threshold: 1 },
            breakDuration: 1_000,
          });
          const signals = sharedSignals(breaker, {
            client: connected.client,
            subscriber: false,
            instance: `i${i}`,
            clock: systemClock,
            pollInterval: 60_000,
            timeout: 2_000,
            onWarning: ignore,
          });
          return { breaker, signals, p: pipeline(breaker) };
        });
        fail(list[0]!.p);
        fail(list[1]!.p);
        await until(
          () => list[0]!.signals.stats().reports + list[1]!.signals.stats().reports === 2,
        );
        await list[2]!.signals.sync();
        expect(list[2]!.breaker.state).toBe('open');
        // After the shared break (Redis time), half-open: one lease, one probe, its outcome.
        await sleep(1_100);
        clock.advance(1_100);
        refusal(list[2]!.p);
        expect(await until(() => list[2]!.signals.stats().leasesGranted === 1)).toBe(true);
        succeed(list[2]!.p);
        expect(await until(() => list[2]!.signals.stats().outcomes === 1)).toBe(true);
        for (const x of list) {
          expect(x.signals.stats().storeFailures).toBe(0);
          x.signals.dispose();
        }
      }
    }, 30_000);
  });
});
