import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ProtectedFetch, protectedFetch, serviceGuard } from '../../../src/http/index.js';
import { OptionsError, pipeline, rateLimiter, retry } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { type FailingServer, serveFailing, type Work } from '../../support/failing-handlers.js';
import { type FlakyDownstream, startFlakyDownstream } from '../../support/flaky-downstream.js';
import { FRAMEWORKS } from '../../support/guarded-servers.js';

interface Problem {
  type: string;
  status: number;
  title: string;
  detail?: string;
  code?: string;
}

/** A loopback address nothing listens on: a port that was free a moment ago. */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

let ok: FlakyDownstream;
let failing: FlakyDownstream;
let hanging: FlakyDownstream;
/** Answers 503 asking for a wait of 2 minutes, longer than the protected fetch waits. */
let pushingBack: FlakyDownstream;
let nowhere: string;

beforeAll(async () => {
  ok = await startFlakyDownstream('ok');
  ok.failShare = 0;
  failing = await startFlakyDownstream('failing');
  failing.failShare = 1;
  hanging = await startFlakyDownstream('hanging');
  hanging.mode = 'hang';
  pushingBack = await startFlakyDownstream('pushing-back', { failShare: 1, retryAfter: '120' });
  nowhere = await refusedUrl();
});

afterAll(async () => {
  await Promise.all([ok.close(), failing.close(), hanging.close(), pushingBack.close()]);
});

/** The outbound calls of one test: each path is one way a handler's call can fail. */
function scenarios(): { work: Work; clients: ProtectedFetch[] } {
  const clock = new ManualClock();
  const plain = protectedFetch({ retry: false, failedResponse: 'reject' });
  // A breaker that opens on the first failure and stays open for a minute of a still clock.
  const tripping = protectedFetch({
    clock,
    retry: false,
    failedResponse: 'reject',
    limit: false,
    breaker: { consecutiveFailures: 1, breakDuration: 60_000 },
  });
  const resolving = protectedFetch({ retry: false });
  const retrying = protectedFetch({ failedResponse: 'reject' });
  const oncePerMinute = pipeline(rateLimiter({ limit: 1, period: 60_000, clock }));
  const retryResults = pipeline(
    retry<Response>({ maxAttempts: 2, delay: 1, handleResult: (r) => !r.ok, lastResult: 'reject' }),
  );
  const text = (r: Response) => r.text();
  const work: Work = async (path, start) => {
    switch (path) {
      case '/deadline':
        return plain(`${hanging.url}/slow`).then(text);
      case '/breaker':
        await tripping(`${failing.url}/a`).then(text, () => 'tripped');
        return tripping(`${failing.url}/b`).then(text);
      case '/rate':
        await oncePerMinute.execute(() => plain(`${ok.url}/a`).then(text));
        return oncePerMinute.execute(() => plain(`${ok.url}/b`).then(text));
      case '/status':
        return plain(`${failing.url}/c`).then(text);
      case '/network':
        return plain(`${nowhere}/d`).then(text);
      case '/pushback':
        return retrying(`${pushingBack.url}/f`).then(text);
      case '/exhausted':
        return retryResults.execute(() => resolving(`${failing.url}/e`)).then(text);
      case '/started':
        start();
        return plain(`${hanging.url}/late`).then(text);
      default:
        throw new Error('boom: an error of the application');
    }
  };
  return { work, clients: [plain, tripping, resolving, retrying] };
}

/** What each framework's own error handler answers (see test/support/failing-handlers.ts). */
const OWN_STATUS = { express: 418, fastify: 500, hono: 418, node: 500 } as const;

describe.each(FRAMEWORKS)('handler failures in %s', (framework) => {
  let server: FailingServer | undefined;
  let clients: ProtectedFetch[] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const c of clients) c.dispose();
  });

  async function serve(options?: { errors?: boolean }) {
    const s = scenarios();
    clients = s.clients;
    server = await serveFailing(framework, serviceGuard(options), s.work);
    return server;
  }
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${server!.url}${path}`, { headers, signal: AbortSignal.timeout(15_000) });

  async function problem(res: Response): Promise<Problem> {
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await res.json()) as Problem;
    expect(body.status).toBe(res.status);
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|at .*\.ts|Timeout "/);
    return body;
  }

  it("answers 504 when an outbound call runs out of the request's deadline", async () => {
    await serve();
    const res = await get('/deadline', { 'x-timeout-ms': '200' });
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(await problem(res)).toMatchObject({
      type: 'about:blank',
      title: 'Gateway Timeout',
      code: 'ERR_BREAKWATER_TIMEOUT',
    });
  });

  it("answers 503 with the breaker's time until half-open when a downstream's breaker is open", async () => {
    await serve();
    const res = await get('/breaker');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(await problem(res)).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      code: 'ERR_BREAKWATER_CIRCUIT_OPEN',
    });
  });

  it("answers 503 with the rate limiter's wait when an outbound rate limit refuses", async () => {
    await serve();
    const res = await get('/rate');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(await problem(res)).toMatchObject({ code: 'ERR_BREAKWATER_RATE_LIMITED' });
  });

  it("answers 503 with the downstream's wait when it asks for more than the call may wait", async () => {
    await serve();
    const res = await get('/pushback');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('120');
    expect(await problem(res)).toMatchObject({ code: 'ERR_BREAKWATER_PUSHBACK_TOO_LONG' });
  });

  it("answers 502 when the downstream's answer is a failure (HttpStatusError)", async () => {
    await serve();
    const res = await get('/status');
    expect(res.status).toBe(502);
    expect(await problem(res)).toMatchObject({
      type: 'about:blank',
      title: 'Bad Gateway',
      code: 'ERR_BREAKWATER_HTTP_STATUS',
    });
  });

  it('answers 502 when the protected fetch meets a network error', async () => {
    await serve();
    const res = await get('/network');
    expect(res.status).toBe(502);
    const body = await problem(res);
    expect(body.title).toBe('Bad Gateway');
    expect(body.code).toBeUndefined();
  });

  it('answers a RetryExhaustedError by its last failure: a failed response is a 502', async () => {
    await serve();
    const res = await get('/exhausted');
    expect(res.status).toBe(502);
    expect(await problem(res)).toMatchObject({ code: 'ERR_BREAKWATER_RETRY_EXHAUSTED' });
  });

  it("leaves an error of the application to the framework's own handler", async () => {
    const s = await serve();
    const res = await get('/other');
    expect(res.status).toBe(OWN_STATUS[framework]);
    expect(String(res.headers.get('content-type'))).not.toMatch(/problem/);
    await res.body?.cancel();
    if (framework === 'node') expect(s.reported).toHaveLength(1);
  });

  it('with errors: false, leaves even the library failures to the framework', async () => {
    if (framework === 'express') return; // guard.errors is added by hand, or not
    await serve({ errors: false });
    // A network error: no status of its own that Fastify's handler would take up.
    const res = await get('/network');
    expect(res.status).toBe(OWN_STATUS[framework]);
    await res.body?.cancel();
  });

  // A Hono handler answers with a whole Response: no response is ever half sent.
  if (framework !== 'hono') {
    it('does not rewrite a response already started: the connection is cut', async () => {
      await serve();
      const res = await get('/started', { 'x-timeout-ms': '200' });
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    });
  }
});

describe('serviceGuard option errors', () => {
  it('throws OptionsError naming the option for a value that is not a boolean', () => {
    expect(() => serviceGuard({ errors: 'yes' as never })).toThrow(OptionsError);
    expect(() => serviceGuard({ errors: 'yes' as never })).toThrow(/errors/);
  });
});

describe('handler failures in fastify with an error handler of its own', () => {
  it("keeps the user's error handler: the plugin does not replace it", async () => {
    const { default: Fastify } = await import('fastify');
    const app = Fastify();
    app.setErrorHandler((_error, _request, reply) => reply.code(418).send('own handler'));
    await app.register(serviceGuard().fastify);
    const client = protectedFetch({ retry: false, failedResponse: 'reject' });
    app.get('/', async () => client(`${failing.url}/x`).then((r) => r.text()));
    try {
      const res = await app.inject({ method: 'GET', url: '/' });
      expect(res.statusCode).toBe(418);
    } finally {
      client.dispose();
      await app.close();
    }
  });

  it('guard.fastifyErrorHandler set by hand answers the library failures', async () => {
    const { default: Fastify } = await import('fastify');
    const guard = serviceGuard();
    const app = Fastify();
    app.setErrorHandler(guard.fastifyErrorHandler);
    const client = protectedFetch({ retry: false, failedResponse: 'reject' });
    app.get('/', async () => client(`${failing.url}/x`).then((r) => r.text()));
    try {
      const res = await app.inject({ method: 'GET', url: '/' });
      expect(res.statusCode).toBe(502);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    } finally {
      client.dispose();
      await app.close();
    }
  });
});
