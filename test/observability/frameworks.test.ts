/**
 * The handler mounted in real Express and Fastify applications, as their documentation in
 * `createObservabilityHandler` shows, with an authentication check of the application's in
 * front of it.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from '../../src/index.js';
import {
  createObservabilityHandler,
  type HealthReport,
  type ObservabilityHandler,
} from '../../src/observability/index.js';
import { fail, openStream, type Served, serve, until } from './support.js';

const TOKEN = 'Bearer ops-secret';

let registry: Registry;
let handler: ObservabilityHandler;

beforeEach(() => {
  registry = new Registry({
    defaults: { circuitBreaker: { window: { kind: 'consecutive', threshold: 2 } } },
  });
  registry.circuitBreaker('payments');
});

afterEach(() => {
  handler.close();
  registry.dispose();
});

const auth = { authorization: TOKEN };

/** The checks both frameworks must pass, against a base URL where the handler is at /ops. */
async function checkMounted(base: string): Promise<void> {
  const health = await fetch(`${base}/ops/health`, { headers: auth });
  expect(health.status).toBe(200);
  expect(((await health.json()) as HealthReport).status).toBe('ok');

  const metrics = await fetch(`${base}/ops/metrics`, { headers: auth });
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(await metrics.text()).toContain('breakwater_circuit_breaker_state{');

  const page = await fetch(`${base}/ops/dashboard`, { headers: auth });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");

  const post = await fetch(`${base}/ops/health`, { method: 'POST', headers: auth });
  expect(post.status).toBe(405);
  expect(post.headers.get('allow')).toBe('GET, HEAD');

  // The application's own check runs first.
  expect((await fetch(`${base}/ops/health`)).status).toBe(401);

  await fail(registry, 'payments', 2);
  expect((await fetch(`${base}/ops/health`, { headers: auth })).status).toBe(503);

  const events = await fetch(`${base}/ops/events`, { headers: auth });
  expect(events.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  await events.body?.cancel();
  await until(() => handler.clients === 0);
}

describe('Express', () => {
  let served: Served;
  afterEach(async () => served.close());

  it('serves every route under app.use(path, auth, handler), with the mount path stripped', async () => {
    handler = createObservabilityHandler(registry, { critical: ['payments'] });
    const app = express();
    app.use('/ops', (req, res, next) => {
      if (req.headers.authorization === TOKEN) next();
      else res.status(401).end();
    });
    app.use('/ops', handler);
    app.get('/ops/custom', (_req, res) => {
      res.send('the application');
    });
    served = await serve(app);
    await checkMounted(served.url);
  });

  it('passes paths it does not serve on to the next Express route', async () => {
    handler = createObservabilityHandler(registry);
    const app = express();
    app.use('/ops', handler);
    app.get('/ops/custom', (_req, res) => {
      res.send('the application');
    });
    served = await serve(app);
    const response = await fetch(`${served.url}/ops/custom`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('the application');
    // Nothing handles it: Express's own 404.
    const missing = await fetch(`${served.url}/ops/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('Cannot GET /ops/nothing');
  });

  it('streams events through the Express mount', async () => {
    handler = createObservabilityHandler(registry, { interval: 100 });
    const app = express();
    app.use('/ops', handler);
    served = await serve(app);
    const stream = await openStream(`${served.url}/ops/events`);
    try {
      const first = JSON.parse((await stream.next()).data);
      expect(first.instances.map((i: { name: string }) => i.name)).toEqual(['payments']);
      registry.circuitBreaker('payments').forceOpen();
      expect(JSON.parse((await stream.next('transition')).data).to).toBe('forced-open');
    } finally {
      stream.close();
    }
  });
});

describe('Fastify', () => {
  let app: FastifyInstance;
  afterEach(async () => app.close());

  /**
   * `forceCloseConnections`: fetch may open a spare connection that never carries a request,
   * which Fastify's default (close idle ones) leaves open, so `app.close()` would wait for it.
   */
  const newApp = () => Fastify({ forceCloseConnections: true });

  async function listen(): Promise<string> {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** The documented raw route: the handler takes over the reply and sees the full URL. */
  function mount(options: Parameters<typeof createObservabilityHandler>[1]): void {
    handler = createObservabilityHandler(registry, { basePath: '/ops', ...options });
    const ops = handler;
    app.all(
      '/ops/*',
      {
        onRequest: async (req, reply) => {
          if (req.headers.authorization !== TOKEN) await reply.code(401).send();
        },
      },
      (req, reply) => {
        reply.hijack();
        ops(req.raw, reply.raw);
      },
    );
    // preClose: before the server waits for open connections, which the streams would hold.
    app.addHook('preClose', async () => ops.close());
  }

  it('serves every route from a raw route with basePath, behind an onRequest check', async () => {
    app = newApp();
    mount({ critical: ['payments'] });
    await checkMounted(await listen());
  });

  it('answers 404 itself for a path below the route it does not serve', async () => {
    app = newApp();
    mount({});
    const base = await listen();
    const response = await fetch(`${base}/ops/nothing`, { headers: auth });
    expect(response.status).toBe(404);
    expect(await response.text()).toBe('Not found\n');
  });

  it('streams events through the raw route and ends them when Fastify closes', async () => {
    app = newApp();
    mount({ interval: 100 });
    const base = await listen();
    const stream = await openStream(`${base}/ops/events`, auth);
    await stream.next();
    registry.circuitBreaker('payments').forceOpen();
    expect(JSON.parse((await stream.next('transition')).data).to).toBe('forced-open');
    await app.close();
    // Ended by the handler (a clean end of the stream), not cut by the closing server.
    await expect(stream.ended).resolves.toBeUndefined();
    expect(handler.clients).toBe(0);
  });
});

describe('the README wiring for Fastify', () => {
  it('is wired in the README as here: a handler of its own with basePath, since Fastify keeps the prefix in req.url', () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const wiring = readme.slice(
      readme.indexOf('// Fastify:'),
      readme.indexOf('fastifyOps.close());', readme.indexOf('// Fastify:')),
    );
    expect(wiring).toContain("createObservabilityHandler(registry, { basePath: '/ops' })");
    expect(wiring).toContain("fastify.all('/ops/*'");
  });
});
