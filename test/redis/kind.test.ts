/**
 * RedisRateLimiter as a policy, on a real Redis server: a gate of pipelines that waits for the
 * decision of Redis, a policy that runs a call alone, and, through its kind, an instance of a
 * registry seen by snapshots, /metrics, /health and the dashboard.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  ConfigError,
  collectMetrics,
  defaultRegistry,
  OptionsError,
  pipeline,
  prometheusText,
  RateLimitedError,
  Registry,
  retry,
  timeout,
} from '../../src/index.js';
import { POLICY_KIND } from '../../src/kinds/index.js';
import { createObservabilityHandler } from '../../src/observability/index.js';
import { RedisRateLimiter, redisRateLimiterKind } from '../../src/redis/index.js';
import { clients, limitersForEachTest } from '../support/redis-clients.js';
import { describeRedis } from '../support/redis-server.js';

/** GETs `path` from `handler` served on loopback. */
async function get(
  handler: ReturnType<typeof createObservabilityHandler>,
  path: string,
): Promise<{ status: number; body: string }> {
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describeRedis('RedisRateLimiter as a policy', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const { limiter } = limitersForEachTest(redis, factory, 'policy');

    it('pipeline(limiter, timeout): calls wait for the decision of Redis and run; past the limit they are refused without running', async () => {
      const l = limiter({ limit: 2, period: 60_000 });
      const p = pipeline(l, timeout(5_000));
      let ran = 0;
      const work = async () => ++ran;
      expect(await p.execute(work)).toBe(1);
      expect(await p.execute(work)).toBe(2);
      const refused = await p.execute(work).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RateLimitedError);
      expect((refused as RateLimitedError).retryAfter).toBeGreaterThan(0);
      expect(ran).toBe(2);
      expect(l.stats()).toMatchObject({ admitted: 2, rejected: 1, roundTrips: 3 });
      p.dispose();
    });

    it('execute runs a call through the limiter alone; tryExecute hands a refusal back as a result', async () => {
      const l = limiter({ limit: 1, period: 60_000 });
      expect(await l.execute(() => 'ran')).toBe('ran');
      const result = await l.tryExecute(() => 'ran again');
      expect(result.ok).toBe(false);
      expect(result.ok ? undefined : result.error).toBeInstanceOf(RateLimitedError);
    });

    it('with maxWait, a refused call waits for the time its refusal named, then runs', async () => {
      const l = limiter({ limit: 10, period: 1_000, burst: 1, maxWait: 1_000 });
      const p = pipeline(l);
      const t0 = performance.now();
      await p.execute(() => 1);
      expect(await p.execute(() => 2)).toBe(2);
      // Not before the next permit, 100 ms after the first (1 ms for rounding).
      expect(performance.now() - t0).toBeGreaterThanOrEqual(99);
      expect(l.stats().admitted).toBe(2);
    });

    it('its refusals are policy rejections: an outer breaker does not count them, a retry does not retry them', async () => {
      const l = limiter({ limit: 1, period: 60_000 });
      const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
      const p = pipeline(retry({ maxAttempts: 3, delay: 0 }), breaker, l);
      await p.execute(() => 'first');
      const refused = await p.execute(() => 'second').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RateLimitedError);
      expect(breaker.state).toBe('closed');
      expect(l.stats().rejected).toBe(1);
      p.dispose();
    });

    it('the key option names the permits calls through a pipeline take: tryAcquire of that key shares them', async () => {
      const l = limiter({ limit: 2, period: 60_000, key: 'shared' });
      expect(await l.tryAcquire('shared')).toBe(0);
      expect(await l.execute(() => 'ran')).toBe('ran');
      expect(await l.tryAcquire('shared')).toBeGreaterThan(0);
      expect(await l.tryAcquire('other')).toBe(0);
    });

    it('aborting a call that waits at the limiter rejects it with the reason, and the work never runs', async () => {
      const l = limiter({ limit: 10, period: 1_000, burst: 1, maxWait: 10_000 });
      await l.execute(() => 'first');
      const controller = new AbortController();
      let ran = false;
      const waiting = pipeline(l).execute(
        () => {
          ran = true;
        },
        { signal: controller.signal },
      );
      const reason = new Error('caller gave up');
      controller.abort(reason);
      await expect(waiting).rejects.toBe(reason);
      expect(ran).toBe(false);
    });

    it('registered in a registry given its kind: in the snapshot, /metrics, /health and the dashboard row', async () => {
      const registry = new Registry(
        { rateLimiters: { local: { limit: 5 } } },
        { kinds: [redisRateLimiterKind] },
      );
      const l = limiter({ limit: 2, period: 60_000 });
      registry.register('search', l);
      registry.rateLimiter('local').tryAcquire();
      const p = pipeline(l);
      await p.execute(() => 1);
      await p.execute(() => 2);
      await p.execute(() => 3).catch(() => {});

      const snapshot = registry.snapshot();
      const entry = snapshot.instances.find((i) => (i.kind as string) === 'redisRateLimiter');
      expect(entry).toMatchObject({
        name: 'search',
        state: 'available',
        stats: { admitted: 2, rejected: 1, roundTrips: 3, storeAvailable: true },
      });
      expect(redisRateLimiterKind.dashboard?.(entry!)).toMatchObject({ calls: 2, rejected: 1 });

      const text = prometheusText(collectMetrics(registry));
      // One family for the permits of both limiters.
      expect(text.match(/^# TYPE breakwater_rate_limiter_permits_total counter$/gm)).toHaveLength(
        1,
      );
      expect(text).toContain(
        'breakwater_rate_limiter_permits_total{name="search",key="",result="admitted"} 2',
      );
      expect(text).toContain(
        'breakwater_rate_limiter_permits_total{name="search",key="",result="rejected"} 1',
      );
      expect(text).toContain(
        'breakwater_rate_limiter_permits_total{name="local",key="",result="admitted"} 1',
      );
      expect(text).toContain(
        'breakwater_redis_rate_limiter_store_available{name="search",key=""} 1',
      );
      expect(text).toContain(
        'breakwater_redis_rate_limiter_round_trips_total{name="search",key=""} 3',
      );

      const handler = createObservabilityHandler(registry);
      const metrics = await get(handler, '/metrics');
      expect(metrics.body).toContain('breakwater_redis_rate_limiter_round_trips_total');
      const health = await get(handler, '/health');
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
      handler.close();
      registry.dispose();
    });
  });

  it('while Redis is away the limiter shows in the state fallback: /health says degraded, with 200', async () => {
    const registry = new Registry({}, { kinds: [redisRateLimiterKind] });
    const { ioredisFactory } = await import('../support/redis-clients.js');
    const connected = await ioredisFactory.connect(redis().port);
    const l = new RedisRateLimiter({
      client: connected.client,
      name: 'away',
      limit: 100,
      timeout: 20,
      probeInterval: 60_000,
      onWarning: () => {},
    });
    registry.register('away', l);
    await redis().kill();
    try {
      const t0 = performance.now();
      while (l.storeAvailable && performance.now() - t0 < 10_000) {
        await l.tryAcquire('k');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(l.storeAvailable).toBe(false);
      expect(registry.snapshot().instances[0]).toMatchObject({ name: 'away', state: 'fallback' });
      const handler = createObservabilityHandler(registry);
      const health = await get(handler, '/health');
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toMatchObject({ status: 'degraded' });
      handler.close();
    } finally {
      registry.dispose();
      await connected.close();
      await redis().restart();
    }
  });
});

describe('redisRateLimiterKind', () => {
  it('builds no instance from config data: the name asked for says to register one built in code', () => {
    const registry = new Registry({}, { kinds: [redisRateLimiterKind] });
    expect(() => registry.get(redisRateLimiterKind, 'search')).toThrow(ConfigError);
    expect(() => registry.get(redisRateLimiterKind, 'search')).toThrow(/registry\.register/);
  });

  it('an unknown key option is refused at construction, naming the field', () => {
    const client = { evalsha: async () => 0, eval: async () => 0, scriptLoad: async () => 'x' };
    expect(() => new RedisRateLimiter({ client, limit: 1, key: 'x'.repeat(2_000) })).toThrow(
      /`key`/,
    );
  });
});

describe('a Redis rate limiter carries its kind', () => {
  const client = { evalsha: async () => 0, eval: async () => 0, scriptLoad: async () => 'x' };

  it('registers in a registry not given the kind, which then lists it', () => {
    const registry = new Registry();
    const l = new RedisRateLimiter({ client, name: 'search', limit: 10 });
    registry.register('search', l);
    expect(registry.get(redisRateLimiterKind, 'search')).toBe(l);
    expect(registry.snapshot().instances).toMatchObject([
      { kind: 'redisRateLimiter', name: 'search', state: 'available' },
    ]);
    expect(prometheusText(collectMetrics(registry))).toContain(
      'breakwater_redis_rate_limiter_store_available{name="search",key=""} 1',
    );
    registry.dispose();
  });

  it('shows in defaultRegistry when named, without registration', () => {
    const l = new RedisRateLimiter({ client, name: 'carried-kind-demo', limit: 10 });
    const listed = defaultRegistry
      .snapshot()
      .instances.filter((i) => i.name === 'carried-kind-demo');
    expect(listed).toMatchObject([{ kind: 'redisRateLimiter' }]);
    l.dispose();
  });

  it('still refuses an object that only pretends to carry the kind', () => {
    const registry = new Registry();
    const fake = { [POLICY_KIND]: redisRateLimiterKind };
    expect(() => registry.register('x', fake)).toThrow(OptionsError);
    expect(registry.snapshot().instances).toEqual([]);
  });
});
