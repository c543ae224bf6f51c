/**
 * The handler on a real `node:http` server on 127.0.0.1: routes, status codes, headers,
 * health, metrics and the dashboard document.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  type CircuitBreakerStats,
  pipeline,
  RateLimiter,
  Registry,
  type RegistryConfig,
} from '../../src/index.js';
import {
  createObservabilityHandler,
  type HealthReport,
  type ObservabilityHandler,
} from '../../src/observability/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { parsePrometheus, sampleValue } from './prometheus.js';
import { fail, openStream, type Served, serve, succeed, until } from './support.js';

const CONFIG: RegistryConfig = {
  defaults: {
    circuitBreaker: { window: { kind: 'consecutive', threshold: 2 }, breakDuration: '1m' },
  },
  bulkheads: { db: { maxConcurrent: 4, maxQueue: 2 } },
  rateLimiters: { search: { limit: 10, period: '1s' } },
};

let registry: Registry;
let handler: ObservabilityHandler;
let served: Served;

async function start(options?: Parameters<typeof createObservabilityHandler>[1]) {
  handler = createObservabilityHandler(registry, options);
  served = await serve((req, res) => handler(req, res));
}

beforeEach(() => {
  registry = new Registry(CONFIG);
  registry.circuitBreaker('payments');
  registry.circuitBreaker('search');
  registry.bulkhead('db');
  registry.rateLimiter('search');
});

afterEach(async () => {
  handler?.close();
  await served?.close();
  registry.dispose();
});

/** Instances as JSON data, without the time in state (it moves on by itself). */
function withoutTime(instances: unknown): unknown {
  return JSON.parse(JSON.stringify(instances, (k, v) => (k === 'timeInState' ? undefined : v)));
}

async function getJson(path: string) {
  const response = await fetch(`${served.url}${path}`);
  return { response, body: (await response.json()) as HealthReport };
}

describe('GET /health', () => {
  it('answers 200, status ok and every instance while every breaker is closed', async () => {
    await start({ critical: ['payments'] });
    const { response, body } = await getJson('/health');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body.status).toBe('ok');
    expect(body.unavailable).toEqual([]);
    expect(body.omitted).toEqual([]);
    expect(Number.isNaN(Date.parse(body.time))).toBe(false);
    const listed = body.instances.map((i) => `${i.kind}:${i.name}`);
    expect(listed.sort()).toEqual([
      'bulkhead:db',
      'circuitBreaker:payments',
      'circuitBreaker:search',
      'rateLimiter:search',
    ]);
    expect(withoutTime(body.instances)).toEqual(withoutTime(registry.snapshot().instances));
  });

  it('answers 503 and lists the breaker once a critical breaker opens', async () => {
    await start({ critical: ['payments'] });
    await fail(registry, 'payments', 2);
    const { response, body } = await getJson('/health');
    expect(response.status).toBe(503);
    expect(body.status).toBe('degraded');
    expect(body.unavailable).toEqual([{ name: 'payments', state: 'open' }]);
  });

  it('answers 503 when one key of a critical keyed breaker is forced open', async () => {
    await start({ critical: ['api'] });
    registry.keyedCircuitBreaker('api', 'a.example');
    registry.keyedCircuitBreaker('api', 'b.example').forceOpen();
    const { response, body } = await getJson('/health');
    expect(response.status).toBe(503);
    expect(body.unavailable).toEqual([{ name: 'api', key: 'b.example', state: 'forced-open' }]);
  });

  it('stays 200 but reports degraded while only a non-critical breaker is open', async () => {
    await start({ critical: ['payments'] });
    await fail(registry, 'search', 2);
    const { response, body } = await getJson('/health');
    expect(response.status).toBe(200);
    expect(body.status).toBe('degraded');
    expect(body.unavailable).toEqual([]);
  });

  it('reports degraded while a breaker is open, half-open or forced open, but answers 503 only for an open or forced-open critical one', async () => {
    const clock = new ManualClock();
    registry.dispose();
    registry = new Registry(CONFIG, { clock });
    await start({ critical: ['payments'] });
    const health = async () => {
      const { response, body } = await getJson('/health');
      return { code: response.status, status: body.status, unavailable: body.unavailable };
    };
    await fail(registry, 'search', 2);
    expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });
    clock.advance(60_000);
    expect(registry.circuitBreaker('search').state).toBe('half-open');
    // Half-open lets only its probes through: traffic is still held back.
    expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });

    await fail(registry, 'payments', 2);
    expect(await health()).toEqual({
      code: 503,
      status: 'degraded',
      unavailable: [{ name: 'payments', state: 'open' }],
    });
    clock.advance(60_000);
    expect(registry.circuitBreaker('payments').state).toBe('half-open');
    // Probing a critical dependency is no reason to take the service out of rotation.
    expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });

    // States set by hand that let every call through are not degraded.
    registry.circuitBreaker('payments').disable();
    registry.circuitBreaker('search').metricsOnly();
    expect(await health()).toEqual({ code: 200, status: 'ok', unavailable: [] });
    registry.circuitBreaker('search').forceOpen();
    expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });
    registry.circuitBreaker('payments').forceOpen();
    expect(await health()).toEqual({
      code: 503,
      status: 'degraded',
      unavailable: [{ name: 'payments', state: 'forced-open' }],
    });
  });

  it('goes back to 200 and ok once the critical breaker is reset', async () => {
    await start({ critical: ['payments'] });
    registry.circuitBreaker('payments').forceOpen();
    expect((await fetch(`${served.url}/health`)).status).toBe(503);
    registry.circuitBreaker('payments').reset();
    const { response, body } = await getJson('/health');
    expect(response.status).toBe(200);
    expect(body.status).toBe('ok');
  });

  it('rounds every number with a fraction to 4 decimals: durations in ms, rates, sums', async () => {
    const clock = new ManualClock();
    registry.dispose();
    registry = new Registry(
      {
        circuitBreakers: {
          payments: {
            window: { kind: 'count', size: 3, minimumCalls: 3 },
            failureRateThreshold: 0.3,
            metrics: { latency: 1 },
          },
        },
      },
      { clock },
    );
    const breaker = registry.circuitBreaker('payments');
    // Durations and times of floating point (0.1 + 0.2 ms, 1/3 ms), and a failure rate of 1/3.
    for (const ms of [0.1, 0.2, 1 / 3]) {
      await pipeline(breaker).tryExecute(() => {
        clock.advance(ms);
        if (ms === 0.1) throw new Error('down');
      });
    }
    expect(breaker.state).toBe('open');
    clock.advance(0.1 + 0.2);
    await start();
    const text = await (await fetch(`${served.url}/health`)).text();
    expect(text).not.toMatch(/\d\.\d{5,}/);
    const stats = (JSON.parse(text) as HealthReport).instances[0]!.stats as CircuitBreakerStats;
    expect(stats.timeInState).toBe(0.3);
    expect(stats.latency).toMatchObject({ count: 3, sum: 0.6333, min: 0.1, max: 0.3333 });
    expect(stats.latency!.recent).toMatchObject({ count: 3, sum: 0.6333 });
    const stream = await openStream(`${served.url}/events`);
    const frame = (await stream.next('snapshot')).data;
    stream.close();
    expect(frame).not.toMatch(/\d\.\d{5,}/);
    expect(frame).toContain('"sum":0.6333');
    expect(frame).toContain('"failureRate":0.3333');
  });

  it('lists at most maxKeysPerName keys of a name, open breakers first, and counts the rest', async () => {
    await start({ maxKeysPerName: 3 });
    for (let i = 0; i < 10; i++) registry.keyedCircuitBreaker('api', `host-${i}`);
    await fail(registry, 'api', 2, 'host-0');
    const { body } = await getJson('/health');
    const keys = body.instances.filter((i) => i.name === 'api').map((i) => i.key);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toBe('host-0');
    expect(body.omitted).toEqual([{ kind: 'circuitBreaker', name: 'api', count: 7 }]);
  });
});

describe('GET /metrics', () => {
  it('answers the Prometheus text format with the series of the registry', async () => {
    await start();
    await succeed(registry, 'payments', 3);
    await fail(registry, 'payments', 2);
    await fail(registry, 'api', 1, 'tenant "a"\nsecond line');
    const response = await fetch(`${served.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const { samples, types } = parsePrometheus(await response.text());
    expect(types.get('breakwater_circuit_breaker_calls_total')).toBe('counter');
    expect(types.get('breakwater_circuit_breaker_state')).toBe('gauge');
    const calls = 'breakwater_circuit_breaker_calls_total';
    expect(sampleValue(samples, calls, { name: 'payments', key: '', outcome: 'success' })).toBe(3);
    expect(sampleValue(samples, calls, { name: 'payments', key: '', outcome: 'failure' })).toBe(2);
    const state = 'breakwater_circuit_breaker_state';
    expect(sampleValue(samples, state, { name: 'payments', key: '', state: 'open' })).toBe(1);
    expect(sampleValue(samples, state, { name: 'payments', key: '', state: 'closed' })).toBe(0);
    // The key's quote and newline came back intact through the format's escapes.
    const key = 'tenant "a"\nsecond line';
    expect(sampleValue(samples, calls, { name: 'api', key, outcome: 'failure' })).toBe(1);
    expect(
      sampleValue(samples, 'breakwater_bulkhead_max_concurrent', { name: 'db', key: '' }),
    ).toBe(4);
  });
});

describe('GET /dashboard', () => {
  it('answers one HTML document whose inline style and script carry the nonce of its CSP', async () => {
    await start();
    const response = await fetch(`${served.url}/dashboard`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`style-src 'nonce-${nonce}'`);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const html = await response.text();
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    // Self-contained: nothing is loaded from anywhere (the SVG namespace is a name, not a load).
    expect(html.replaceAll("'http://www.w3.org/2000/svg'", '')).not.toMatch(
      /\ssrc=|<link rel="stylesheet"|https?:\/\//,
    );
  });

  it('uses a fresh nonce for each answer', async () => {
    await start();
    const a = (await fetch(`${served.url}/dashboard`)).headers.get('content-security-policy');
    const b = (await fetch(`${served.url}/dashboard`)).headers.get('content-security-policy');
    expect(a).not.toBe(b);
  });

  it('shows its title as text, escaped', async () => {
    await start({ title: '<script>alert(1)</script> & "ops"' });
    const html = await (await fetch(`${served.url}/dashboard`)).text();
    expect(html).toContain(
      '<title>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;ops&quot;</title>',
    );
    expect(html).not.toContain('<script>alert(1)');
  });
});

describe('methods and paths', () => {
  it('answers HEAD with the status and headers of GET and no body', async () => {
    await start({ critical: ['payments'] });
    registry.circuitBreaker('payments').forceOpen();
    for (const path of ['/health', '/metrics', '/dashboard', '/events']) {
      const get = await fetch(`${served.url}${path}`);
      const head = await fetch(`${served.url}${path}`, { method: 'HEAD' });
      expect(head.status, path).toBe(get.status);
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'));
      expect(await head.text(), path).toBe('');
      if (path === '/events') {
        await get.body?.cancel();
        continue;
      }
      const length = new TextEncoder().encode(await get.text()).byteLength;
      // The health report holds times that differ between the two answers; its length may too.
      if (path === '/health') expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
      else expect(Number(head.headers.get('content-length')), path).toBe(length);
    }
    await until(() => handler.clients === 0);
  });

  it('answers 405 with Allow: GET, HEAD to other methods on its routes', async () => {
    await start();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const response = await fetch(`${served.url}/health`, { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow'), method).toBe('GET, HEAD');
    }
  });

  it('answers 404 to a path it does not serve when no next is given', async () => {
    await start();
    for (const path of ['/', '/healthz', '/health//', '/dashboard/x', '/Health']) {
      const response = await fetch(`${served.url}${path}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    }
  });

  it('hands a path it does not serve to next, and answers its own paths itself', async () => {
    handler = createObservabilityHandler(registry);
    served = await serve((req, res) =>
      handler(req, res, () => {
        res.writeHead(418).end('app');
      }),
    );
    const other = await fetch(`${served.url}/orders`);
    expect(other.status).toBe(418);
    expect(await other.text()).toBe('app');
    expect((await fetch(`${served.url}/health`)).status).toBe(200);
  });

  it('routes on the path alone, whatever the query string', async () => {
    await start();
    expect((await fetch(`${served.url}/health?verbose=1#x`)).status).toBe(200);
    expect((await fetch(`${served.url}/metrics?name[]=x`)).status).toBe(200);
  });

  it('serves below basePath and treats every other path as not its own', async () => {
    await start({ basePath: '/ops/' });
    expect((await fetch(`${served.url}/ops/health`)).status).toBe(200);
    expect((await fetch(`${served.url}/ops/metrics`)).status).toBe(200);
    expect((await fetch(`${served.url}/health`)).status).toBe(404);
    expect((await fetch(`${served.url}/opsx/health`)).status).toBe(404);
    expect((await fetch(`${served.url}/ops`)).status).toBe(404);
  });

  it('serves every route with a trailing slash too, under a basePath given with or without one', async () => {
    for (const basePath of ['/ops', '/ops/']) {
      await start({ basePath });
      for (const path of ['health', 'metrics', 'dashboard']) {
        expect((await fetch(`${served.url}/ops/${path}`)).status, `${basePath} ${path}`).toBe(200);
        expect((await fetch(`${served.url}/ops/${path}/`)).status, `${basePath} ${path}/`).toBe(
          200,
        );
        expect((await fetch(`${served.url}/ops/${path}/?x=1`)).status).toBe(200);
      }
      const stream = await openStream(`${served.url}/ops/events/`);
      expect(stream.response.status).toBe(200);
      await stream.next('snapshot');
      stream.close();
      // Only one slash is dropped, and only at the end.
      expect((await fetch(`${served.url}/ops/health//`)).status).toBe(404);
      expect((await fetch(`${served.url}/ops//health`)).status).toBe(404);
      handler.close();
      await served.close();
    }
    await start();
    expect((await fetch(`${served.url}/health/`)).status).toBe(200);
    expect((await fetch(`${served.url}/`)).status).toBe(404);
  });

  it('changes no state, whatever the method', async () => {
    await start();
    const breaker = registry.circuitBreaker('payments');
    breaker.forceOpen();
    // Everything but the time in state, which moves on by itself.
    const state = () => withoutTime(registry.snapshot());
    const before = state();
    for (const method of ['POST', 'PUT', 'DELETE']) {
      for (const path of ['/health', '/dashboard', '/events', '/reset']) {
        await (await fetch(`${served.url}${path}`, { method })).arrayBuffer();
      }
    }
    expect(breaker.state).toBe('forced-open');
    expect(state()).toEqual(before);
  });
});

describe('work per request', () => {
  /** Counts the instance snapshots (`stats()`) built while `fn` runs, by kind. */
  async function countStats<T>(fn: () => Promise<T>) {
    const spies = {
      circuitBreaker: vi.spyOn(CircuitBreaker.prototype, 'stats'),
      bulkhead: vi.spyOn(Bulkhead.prototype, 'stats'),
      rateLimiter: vi.spyOn(RateLimiter.prototype, 'stats'),
    };
    try {
      const result = await fn();
      const built = {
        circuitBreaker: spies.circuitBreaker.mock.calls.length,
        bulkhead: spies.bulkhead.mock.calls.length,
        rateLimiter: spies.rateLimiter.mock.calls.length,
      };
      return { result, built };
    } finally {
      for (const spy of Object.values(spies)) spy.mockRestore();
    }
  }

  /** 300 keys of each keyed kind (all held as instances), a few breakers open among them. */
  async function manyKeys() {
    for (let i = 0; i < 300; i++) {
      registry.keyedCircuitBreaker('api', `host-${i}`);
      registry.keyedBulkhead('db', `tenant-${i}`);
      registry.keyedRateLimiter('search', `client-${i}`).tryAcquire();
    }
    for (let i = 0; i < 30; i++) await fail(registry, 'api', 2, `host-${i * 7}`);
  }

  /** Instances listed in a health report or snapshot event, by kind. */
  function listed(instances: readonly { kind: string }[]) {
    const n = (kind: string) => instances.filter((i) => i.kind === kind).length;
    return {
      circuitBreaker: n('circuitBreaker'),
      bulkhead: n('bulkhead'),
      rateLimiter: n('rateLimiter'),
    };
  }

  it('GET /health snapshots only the instances it lists, and still sees every open key', async () => {
    await start({ critical: ['api'] });
    await manyKeys();
    const { result, built } = await countStats(() => getJson('/health'));
    const { response, body } = result;
    expect(response.status).toBe(503);
    expect(body.unavailable).toHaveLength(30);
    // Named: payments, search; keyed: 20 of api, the open ones first.
    expect(listed(body.instances)).toEqual({ circuitBreaker: 22, bulkhead: 21, rateLimiter: 21 });
    expect(
      body.instances
        .filter((i) => i.name === 'api')
        .every((i) => i.kind === 'circuitBreaker' && i.state === 'open'),
    ).toBe(true);
    expect(body.omitted).toEqual([
      { kind: 'circuitBreaker', name: 'api', count: 280 },
      { kind: 'bulkhead', name: 'db', count: 280 },
      { kind: 'rateLimiter', name: 'search', count: 280 },
    ]);
    expect(built.circuitBreaker).toBeLessThanOrEqual(22);
    expect(built.bulkhead).toBeLessThanOrEqual(21);
    expect(built.rateLimiter).toBeLessThanOrEqual(21);
  });

  it('GET /metrics snapshots only the keys it reports one by one and sums the others', async () => {
    await start();
    await manyKeys();
    const { result, built } = await countStats(async () =>
      (await fetch(`${served.url}/metrics`)).text(),
    );
    const { samples } = parsePrometheus(result);
    const keysOf = (family: string, name: string) =>
      new Set(
        samples
          .filter((s) => s.name === family && s.labels.name === name && s.labels.key !== '')
          .map((s) => s.labels.key),
      );
    expect(keysOf('breakwater_circuit_breaker_calls_total', 'api').size).toBe(21);
    expect(keysOf('breakwater_bulkhead_in_flight', 'db').size).toBe(21);
    expect(keysOf('breakwater_rate_limiter_permits_total', 'search').size).toBe(21);
    const calls = 'breakwater_circuit_breaker_calls_total';
    const failures = samples
      .filter((s) => s.name === calls && s.labels.name === 'api' && s.labels.outcome === 'failure')
      .reduce((sum, s) => sum + s.value, 0);
    expect(failures).toBe(60);
    const open = 'breakwater_circuit_breaker_state';
    expect(sampleValue(samples, open, { name: 'api', key: '_other', state: 'open' })).toBe(10);
    expect(sampleValue(samples, open, { name: 'api', key: '_other', state: 'closed' })).toBe(270);
    const admitted = 'breakwater_rate_limiter_permits_total';
    expect(
      sampleValue(samples, admitted, { name: 'search', key: '_other', result: 'admitted' }),
    ).toBe(280);
    // Named ones, and 20 keys of each keyed name.
    expect(built.circuitBreaker).toBeLessThanOrEqual(22);
    expect(built.bulkhead).toBeLessThanOrEqual(21);
    expect(built.rateLimiter).toBeLessThanOrEqual(21);
  });

  it('a dashboard snapshot event snapshots only the instances it lists', async () => {
    await start({ interval: 60_000 });
    await manyKeys();
    const { result, built } = await countStats(async () => {
      const stream = await openStream(`${served.url}/events`);
      try {
        return JSON.parse((await stream.next()).data) as { instances: { kind: string }[] };
      } finally {
        stream.close();
      }
    });
    expect(listed(result.instances)).toEqual({ circuitBreaker: 22, bulkhead: 21, rateLimiter: 21 });
    expect(built.circuitBreaker).toBeLessThanOrEqual(22);
    expect(built.bulkhead).toBeLessThanOrEqual(21);
    expect(built.rateLimiter).toBeLessThanOrEqual(21);
    await until(() => handler.clients === 0);
  });
});

/** A real registry that fails when its instances are read, to reach the handler's error path. */
class FailingRegistry extends Registry {
  override instancesForMetrics(): never {
    throw new Error('snapshot failed');
  }
}

describe('errors while answering', () => {
  it('answers 500 when reading the registry throws and there is no next', async () => {
    registry = new FailingRegistry(CONFIG);
    await start();
    const response = await fetch(`${served.url}/health`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('Internal error\n');
  });

  it('passes the error to next when there is one', async () => {
    registry = new FailingRegistry(CONFIG);
    handler = createObservabilityHandler(registry);
    const errors: unknown[] = [];
    served = await serve((req, res) =>
      handler(req, res, (error) => {
        errors.push(error);
        res.writeHead(502).end();
      }),
    );
    expect((await fetch(`${served.url}/health`)).status).toBe(502);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('snapshot failed');
  });
});
