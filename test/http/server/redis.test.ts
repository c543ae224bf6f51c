/**
 * The service guard's rate limit on a real Redis: two services (two guards, two frameworks)
 * share one limit, and a store that stops answering lets requests through or refuses them as
 * the guard's `onStoreError` says.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serviceGuard } from '../../../src/http/index.js';
import type { RedisRateLimiter } from '../../../src/redis/index.js';
import { type GuardedServer, serveGuarded } from '../../support/guarded-servers.js';
import { clients, limitersForEachTest } from '../../support/redis-clients.js';
import { describeRedis } from '../../support/redis-server.js';

/** A permit a minute, a burst of 3: nothing comes back while a test runs. */
const LIMIT = { limit: 3, period: 180_000 };

describeRedis('serviceGuard with a RedisRateLimiter', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const { limiter } = limitersForEachTest(redis, factory, 'guard');
    const servers: GuardedServer[] = [];
    afterEach(async () => {
      for (const s of servers.splice(0)) await s.close();
    });
    const serve = async (framework: 'express' | 'fastify', l: RedisRateLimiter, closed = false) => {
      const guard = serviceGuard({
        rateLimit: { limiter: l, onStoreError: closed ? 'closed' : 'open' },
      });
      const server = await serveGuarded(framework, guard);
      servers.push(server);
      return server;
    };

    it('counts what is left down across two services sharing one Redis', async () => {
      const shared = limiter(LIMIT);
      // The same name, so the same keys in Redis, as two processes of one service would have.
      const other = limiter({ ...LIMIT, name: shared.name });
      const a = await serve('express', shared);
      const b = await serve('fastify', other);
      const seen: (string | null)[] = [];
      const statuses: number[] = [];
      for (const url of [a.url, b.url, a.url, b.url]) {
        const res = await fetch(`${url}/work`);
        statuses.push(res.status);
        seen.push(res.headers.get('ratelimit'));
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(seen.map((h) => /;r=(\d+)/.exec(h ?? '')?.[1])).toEqual(['2', '1', '0', '0']);
      expect(a.probe.runs + b.probe.runs).toBe(3);
    });

    it.each([
      ['open', 200, 1],
      ['closed', 503, 0],
    ] as const)('with Redis away and onStoreError %s, answers %i', async (mode, status, runs) => {
      const connected = await factory.connect(redis().port);
      const l = limiter({ ...LIMIT, onStoreFailure: 'local' }, () => connected.client);
      const server = await serve('express', l, mode === 'closed');
      expect((await fetch(`${server.url}/work`)).status).toBe(200);
      await connected.close();
      const res = await fetch(`${server.url}/work`);
      expect(res.status).toBe(status);
      expect(res.headers.get('ratelimit')).toBeNull();
      expect(server.probe.runs).toBe(1 + runs);
    });
  });
});
