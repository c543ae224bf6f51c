/**
 * RedisBulkhead as a policy of a registry, on a real Redis server: its kind (learnt from the
 * instance, no `kinds` option) shows it in the snapshot, /metrics, /health and the dashboard
 * row, with the store's health; its refusals are policy rejections.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import {
  BulkheadRejectedError,
  CircuitBreaker,
  collectMetrics,
  pipeline,
  prometheusText,
  Registry,
  retry,
} from '../../../src/index.js';
import { createObservabilityHandler } from '../../../src/observability/index.js';
import { RedisBulkhead, redisBulkheadKind } from '../../../src/redis/index.js';
import { ioredisFactory } from '../../support/redis-clients.js';
import { describeRedis } from '../../support/redis-server.js';

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

describeRedis('RedisBulkhead in a registry', (redis) => {
  it('registered: in the snapshot, /metrics, /health and the dashboard row; degraded (200) while Redis is away', async () => {
    const connected = await ioredisFactory.connect(redis().port);
    const registry = new Registry();
    const b = new RedisBulkhead({
      client: connected.client,
      name: 'db',
      maxConcurrent: 2,
      probeInterval: 60_000,
      onWarning: () => {},
    });
    registry.register('db', b);
    try {
      const p = pipeline(b);
      await p.execute(() => 1);
      const held = await b.acquire();
      const other = await b.acquire();
      const refused = await p.execute(() => 2).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BulkheadRejectedError);
      await held.release();
      await other.release();

      const entry = registry.snapshot().instances.find((i) => i.name === 'db');
      expect(entry).toMatchObject({
        kind: 'redisBulkhead',
        state: 'available',
        stats: { admitted: 3, inFlight: 0, storeAvailable: true, liveInstances: 1 },
      });
      expect(redisBulkheadKind.dashboard?.(entry!)).toMatchObject({ calls: 3, rejected: 1 });

      const text = prometheusText(collectMetrics(registry));
      expect(text).toContain('breakwater_bulkhead_admitted_total{name="db",key=""} 3');
      expect(text).toContain(
        'breakwater_bulkhead_rejections_total{name="db",key="",reason="full"} 1',
      );
      expect(text).toContain('breakwater_redis_bulkhead_store_available{name="db",key=""} 1');
      expect(text).toContain('breakwater_redis_bulkhead_live_instances{name="db",key=""} 1');
      expect(text).toMatch(/breakwater_redis_bulkhead_round_trips_total\{name="db",key=""\} \d+/);

      const handler = createObservabilityHandler(registry);
      expect(JSON.parse((await get(handler, '/health')).body)).toMatchObject({ status: 'ok' });
      await redis().kill();
      const local = await b.acquire();
      expect(local.local).toBe(true);
      expect(registry.snapshot().instances[0]).toMatchObject({ name: 'db', state: 'fallback' });
      const health = await get(handler, '/health');
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body)).toMatchObject({ status: 'degraded' });
      await local.release();
      handler.close();
    } finally {
      registry.dispose();
      await connected.close();
      await redis().restart();
    }
  });

  it('its refusals are policy rejections: an outer breaker does not count them', async () => {
    const connected = await ioredisFactory.connect(redis().port);
    const b = new RedisBulkhead({
      client: connected.client,
      name: 'rejections',
      maxConcurrent: 1,
      onWarning: () => {},
    });
    try {
      const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
      const p = pipeline(retry({ maxAttempts: 3, delay: 0 }), breaker, b);
      const held = await b.acquire();
      await expect(p.execute(() => 'x')).rejects.toBeInstanceOf(BulkheadRejectedError);
      expect(breaker.state).toBe('closed');
      expect(b.stats().rejectionsByReason.full).toBe(1);
      await held.release();
    } finally {
      b.dispose();
      await connected.close();
    }
  });
});
