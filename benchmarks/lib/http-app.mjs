/**
 * One server of the http-server scenario, in a process of its own (see http.mjs, startApp),
 * driven over IPC. `{ id, type: 'start', app: { framework, guard } }` starts a route answering
 * 200 with a 2-byte body on a free loopback port and answers `{ id, url }`: `framework` is
 * 'express', 'fastify' or 'node'; `guard` is 'none', 'breakwater' (the service guard of
 * http.mjs), 'express-rate-limit' or 'under-pressure', configured in http.mjs, or 'context' (a
 * request context and a close listener by hand, the floor of any such guard). `heapStart`
 * collects twice and reads the heap size, `heapEnd` reads it again and answers
 * `{ id, bytes, collected }` (whether a collection started in between). It exits when the
 * parent goes. Run with --expose-gc.
 */
import { createServer } from 'node:http';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { bwServiceGuard, expressRateLimiter, underPressureOptions } from './http.mjs';
import { breakwaterModule } from './peers.mjs';

const BODY = 'ok';

/** The guard of the breakwater rows, made from the measured build. */
async function guard() {
  return bwServiceGuard(
    await breakwaterModule('http/index.js'),
    await breakwaterModule('index.js'),
  );
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}/`));
  });
}

/** Express 5, the guard's middleware (if any) before the route. */
async function expressApp(kind) {
  const { default: express } = await import('express');
  const app = express();
  if (kind === 'breakwater') app.use((await guard()).connect);
  if (kind === 'context') {
    const { run, closed } = await contextStore();
    app.use((_req, res, next) => {
      res.once('close', closed);
      run(next);
    });
  }
  if (kind === 'express-rate-limit') {
    const { rateLimit } = await import('express-rate-limit');
    app.use(expressRateLimiter(rateLimit));
  }
  app.get('/', (_req, res) => {
    res.send(BODY);
  });
  return listen(createServer(app));
}

/** Fastify 5, the guard's plugin (if any) registered before the route. */
async function fastifyApp(kind) {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  if (kind === 'breakwater') await app.register((await guard()).fastify);
  if (kind === 'context') {
    const { store, closed } = await contextStore();
    app.addHook('onRequest', (_req, reply, done) => {
      reply.raw.once('close', closed);
      store.run({ deadline: Number.POSITIVE_INFINITY }, done);
    });
  }
  if (kind === 'under-pressure') {
    const { default: underPressure } = await import('@fastify/under-pressure');
    await app.register(underPressure, underPressureOptions());
  }
  app.get('/', async () => BODY);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${app.server.address().port}/`;
}

/** node:http, the handler wrapped by the guard (if any). */
async function nodeApp(kind) {
  const handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(BODY);
  };
  if (kind === 'context') return listen(createServer(await contextOnly(handler)));
  return listen(createServer(kind === 'breakwater' ? (await guard()).node(handler) : handler));
}

/**
 * The least a guard that carries a request context and holds a permit until the response ends
 * pays, written by hand: an AsyncLocalStorage run and one `close` listener per request.
 */
async function contextOnly(handler) {
  const { store, closed } = await contextStore();
  return (req, res) => {
    res.once('close', closed);
    store.run({ deadline: Number.POSITIVE_INFINITY }, handler, req, res);
  };
}

/** A request-context store, a way to run the rest of a request in it, and a no-op close listener. */
async function contextStore() {
  const { AsyncLocalStorage } = await import('node:async_hooks');
  const store = new AsyncLocalStorage();
  const run = (next) => store.run({ deadline: Number.POSITIVE_INFINITY }, next);
  return { store, run, closed: () => {} };
}

const APPS = { express: expressApp, fastify: fastifyApp, node: nodeApp };

const gcStarts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcStarts.push(entry.startTime);
}).observe({ entryTypes: ['gc'] });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let heap0 = 0;
let t0 = 0;

async function answer(m) {
  if (m.type === 'start') return { url: await APPS[m.app.framework](m.app.guard) };
  if (m.type === 'heapStart') {
    globalThis.gc();
    globalThis.gc();
    await sleep(0);
    heap0 = v8.getHeapStatistics().used_heap_size;
    t0 = performance.now();
    return {};
  }
  if (m.type === 'heapEnd') {
    const t1 = performance.now();
    const bytes = v8.getHeapStatistics().used_heap_size - heap0;
    // Let the observer deliver any entry of a collection that ran during the batch.
    await sleep(5);
    return { bytes, collected: gcStarts.some((t) => t >= t0 && t <= t1) };
  }
  throw new Error(`unknown message ${m.type}`);
}

process.on('message', async (m) => {
  try {
    process.send({ id: m.id, ...(await answer(m)) });
  } catch (error) {
    process.send({ id: m.id, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
