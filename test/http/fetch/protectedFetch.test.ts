import { afterEach, describe, expect, it } from 'vitest';
import {
  FetchErrorCode,
  HttpStatusError,
  type ProtectedFetch,
  type ProtectedFetchOptions,
  PushbackTooLongError,
  protectedFetch,
  runWithRequestContext,
  standardPresetDefaults,
} from '../../../src/http/index.js';
import { ErrorCode, OptionsError } from '../../../src/index.js';
import {
  type Script,
  type ScriptedServer,
  startScriptedServer,
} from '../../support/scriptedServer.js';

const servers: ScriptedServer[] = [];
const fetches: ProtectedFetch[] = [];

async function serve(script: Script): Promise<ScriptedServer> {
  const s = await startScriptedServer(script);
  servers.push(s);
  return s;
}

/** A protected fetch whose retries wait 0 ms (full jitter drawn at 0), for tests of what is retried. */
function quick(options: ProtectedFetchOptions = {}): ProtectedFetch {
  const f = protectedFetch({ retry: { random: () => 0 }, ...options });
  fetches.push(f);
  return f;
}

afterEach(async () => {
  for (const f of fetches.splice(0)) f.dispose();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('protectedFetch: the standard preset', () => {
  it('has the documented defaults', () => {
    expect(standardPresetDefaults).toEqual({
      methods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'QUERY'],
      failureStatuses: [408, 429, 500, 502, 503, 504],
      maxRetries: 2,
      delay: 300,
      maxDelay: 10_000,
      budget: { ratio: 0.1, minRetriesPerSecond: 5 },
      attemptTimeout: 10_000,
      timeout: 30_000,
      breaker: {
        window: { kind: 'time', duration: 30_000, minimumCalls: 20 },
        failureRateThreshold: 0.5,
        consecutiveFailures: 10,
        breakDuration: 5_000,
      },
      limit: { algorithm: 'vegas', minWindow: 250 },
      limitDrops: [429, 503],
      failedResponse: 'resolve',
      deadlineHeader: 'x-timeout-ms',
      criticalityHeader: 'x-criticality',
      maxOrigins: 1_000,
      originIdleTimeout: 600_000,
    });
    expect(Object.isFrozen(standardPresetDefaults)).toBe(true);
  });

  it('arms no timer and sends nothing when it is made', () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const f = protectedFetch();
    fetches.push(f);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
    expect(f.stats()).toEqual([]);
  });
});

describe('protectedFetch: what is retried', () => {
  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])(
    'retries %s twice on a 503, then returns the last response',
    async (method) => {
      const server = await serve(() => ({ status: 503 }));
      const res = await quick()(server.url, { method });
      expect(res.status).toBe(503);
      expect(server.requests.map((r) => r.method)).toEqual([method, method, method]);
    },
  );

  it.each(['POST', 'PATCH'])('sends %s once without an Idempotency-Key', async (method) => {
    const server = await serve(() => ({ status: 503 }));
    expect((await quick()(server.url, { method, body: 'x' })).status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a POST with an Idempotency-Key, or marked idempotent per call or in the options', async () => {
    const server = await serve(() => ({ status: 502 }));
    const f = quick();
    await f(server.url, { method: 'POST', headers: { 'Idempotency-Key': 'k1' }, body: 'a' });
    expect(server.requests).toHaveLength(3);
    await f(server.url, { method: 'POST', idempotent: true, body: 'a' });
    expect(server.requests).toHaveLength(6);
    await quick({ idempotent: true })(server.url, { method: 'PATCH', body: 'a' });
    expect(server.requests).toHaveLength(9);
  });

  it('sends a GET once with retry: false or idempotent: false', async () => {
    const server = await serve(() => ({ status: 503 }));
    const f = quick();
    await f(server.url, { retry: false });
    await f(server.url, { idempotent: false });
    expect(server.requests).toHaveLength(2);
  });

  it.each([408, 429, 500, 502, 503, 504])('retries a %i', async (status) => {
    const server = await serve((_, i) => ({ status: i < 2 ? status : 200 }));
    const res = await quick()(server.url);
    expect(res.status).toBe(200);
    expect(server.requests).toHaveLength(3);
  });

  it.each([501, 400, 401, 403, 404, 409, 422])('never retries a %i', async (status) => {
    const server = await serve(() => ({ status }));
    expect((await quick()(server.url)).status).toBe(status);
    expect(server.requests).toHaveLength(1);
  });

  it('takes a list or a predicate of failure statuses', async () => {
    const server = await serve(() => ({ status: 501 }));
    await quick({ failure: [501] })(server.url);
    expect(server.requests).toHaveLength(3);
    await quick({ failure: (r) => r.status >= 500 })(server.url);
    expect(server.requests).toHaveLength(6);
  });

  it('retries network errors and fails with the last one', async () => {
    const server = await serve(() => ({ status: 200 }));
    const url = server.url;
    await server.close();
    servers.splice(0);
    let sent = 0;
    const f = quick({
      fetch: (input, init) => {
        sent++;
        return fetch(input, init);
      },
    });
    await expect(f(url)).rejects.toThrow(TypeError);
    expect(sent).toBe(3);
  });

  it('retries an attempt that times out before its headers, each aborted at the server', async () => {
    const server = await serve((_, i) => (i < 2 ? 'hang' : { status: 200 }));
    const res = await quick({ attemptTimeout: 100 })(server.url);
    expect(res.status).toBe(200);
    expect(server.requests).toHaveLength(3);
    await expect.poll(() => server.requests.slice(0, 2).every((r) => r.aborted)).toBe(true);
  });
});

describe('protectedFetch: pushback', () => {
  it('waits at least the pushback before the next attempt', async () => {
    const server = await serve((_, i) =>
      i === 0 ? { status: 503, headers: { 'grpc-retry-pushback-ms': '300' } } : { status: 200 },
    );
    const res = await quick()(server.url);
    expect(res.status).toBe(200);
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(299);
  });

  it('fails at once with the wait in the error when the pushback passes the deadline', async () => {
    const server = await serve(() => ({ status: 429, headers: { 'retry-after': '60' } }));
    const started = performance.now();
    const error = await quick()(server.url, { timeout: 5_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushbackTooLongError);
    const e = error as PushbackTooLongError;
    expect(e.code).toBe(FetchErrorCode.PushbackTooLong);
    expect(e.wait).toBe(60_000);
    expect(e.allowed).toBeLessThanOrEqual(5_000);
    expect(e.status).toBe(429);
    expect(e.message).toContain('60000 ms');
    expect(server.requests).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('fails at once on a pushback above retry.maxDelay, within the deadline', async () => {
    const server = await serve(() => ({ status: 503, headers: { 'retry-after': '20' } }));
    const error = await quick()(server.url).catch((e: unknown) => e);
    expect((error as PushbackTooLongError).wait).toBe(20_000);
    expect((error as PushbackTooLongError).allowed).toBe(10_000);
    expect(server.requests).toHaveLength(1);
  });

  it('reads RateLimit and X-RateLimit-Reset too', async () => {
    const server = await serve(() => ({
      status: 429,
      headers: { ratelimit: '"default";r=0;t=45' },
    }));
    const error = await quick()(server.url).catch((e: unknown) => e);
    expect((error as PushbackTooLongError).wait).toBe(45_000);
    server.setScript(() => ({
      status: 429,
      headers: { 'x-ratelimit-reset': '50', 'x-ratelimit-remaining': '0' },
    }));
    const again = await quick()(server.url).catch((e: unknown) => e);
    expect((again as PushbackTooLongError).wait).toBe(50_000);
  });
});

describe('protectedFetch: bodies', () => {
  const bodies: [string, () => RequestInit['body'], string][] = [
    ['a string', () => 'plain', 'plain'],
    ['an ArrayBuffer', () => new TextEncoder().encode('buffer').buffer as ArrayBuffer, 'buffer'],
    ['a typed array', () => new TextEncoder().encode('typed'), 'typed'],
    ['a Blob', () => new Blob(['blob']), 'blob'],
    ['URLSearchParams', () => new URLSearchParams({ a: '1' }), 'a=1'],
  ];
  it.each(bodies)('replays %s on every attempt', async (_, body, text) => {
    const server = await serve(() => ({ status: 503 }));
    await quick()(server.url, { method: 'PUT', body: body() });
    expect(server.requests.map((r) => r.body)).toEqual([text, text, text]);
  });

  it('replays FormData', async () => {
    const server = await serve(() => ({ status: 503 }));
    const form = new FormData();
    form.set('field', 'value');
    await quick()(server.url, { method: 'PUT', body: form });
    expect(server.requests).toHaveLength(3);
    for (const r of server.requests) expect(r.body).toContain('value');
  });

  const stream = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed'));
        c.close();
      },
    });

  it('sends a stream body once, never retried', async () => {
    const server = await serve(() => ({ status: 503 }));
    const res = await quick()(server.url, { method: 'PUT', body: stream() });
    expect(res.status).toBe(503);
    expect(server.requests.map((r) => r.body)).toEqual(['streamed']);
  });

  it('retries a stream made again by a body function', async () => {
    const server = await serve(() => ({ status: 503 }));
    await quick()(server.url, { method: 'PUT', body: stream });
    expect(server.requests.map((r) => r.body)).toEqual(['streamed', 'streamed', 'streamed']);
  });

  it('never lets an attempt timeout abort a body the caller is reading', async () => {
    const server = await serve(() => ({ status: 200, body: 30 }));
    const res = await quick({ attemptTimeout: 100 })(server.url);
    // Past the attempt's deadline before the body is read: nothing of the pipeline aborts it.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await res.text()).toBe('x'.repeat(30));
  });
});

describe('protectedFetch: the final outcome', () => {
  it("rejects with an HttpStatusError carrying the last response with failedResponse: 'reject'", async () => {
    const server = await serve(() => ({ status: 503, headers: { 'x-why': 'busy' }, body: 'down' }));
    const error = await quick({ failedResponse: 'reject' })(server.url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    const e = error as HttpStatusError;
    expect(e.code).toBe('ERR_BREAKWATER_HTTP_STATUS');
    expect([e.status, e.attempts, e.headers.get('x-why')]).toEqual([503, 3, 'busy']);
    expect(await e.response.text()).toBe('down');
  });

  it('rejects with a 404 too, and resolves with a 2xx', async () => {
    const server = await serve((_, i) => ({ status: i === 0 ? 404 : 204 }));
    const f = quick({ failedResponse: 'reject' });
    expect(((await f(server.url).catch((e: unknown) => e)) as HttpStatusError).status).toBe(404);
    expect((await f(server.url)).status).toBe(204);
  });
});

describe('protectedFetch: per origin', () => {
  it('opens the breaker of a failing origin only, after a run of failures, with a typed refusal', async () => {
    const down = await serve(() => ({ status: 500 }));
    const up = await serve(() => ({ status: 200 }));
    const f = quick({ retry: false });
    for (let i = 0; i < 10; i++) await f(down.url);
    expect(f.stats(down.origin)?.breaker?.state).toBe('open');
    const refusal = await f(down.url).catch((e: unknown) => e);
    expect((refusal as { code: string }).code).toBe(ErrorCode.CircuitOpen);
    expect(down.requests).toHaveLength(10);
    expect((await f(up.url)).status).toBe(200);
    expect(f.stats(`${up.origin}/any/path`)?.breaker?.state).toBe('closed');
    expect(
      f
        .stats()
        .map((s) => s.origin)
        .sort(),
    ).toEqual([down.origin, up.origin].sort());
  });

  it('refuses past the origin adaptive limit with a typed error', async () => {
    const server = await serve(() => 'hang');
    const f = quick({
      limit: { initialLimit: 2 },
      attemptTimeout: 1_000,
      breaker: false,
      retry: false,
    });
    const calls = [f(server.url), f(server.url)];
    const refusal = await f(server.url).catch((e: unknown) => e);
    expect((refusal as { code: string }).code).toBe(ErrorCode.ConcurrencyLimit);
    expect(f.stats(server.origin)?.limit?.inFlight).toBe(2);
    await Promise.allSettled(calls);
  });

  it('keeps at most maxOrigins origins', async () => {
    const a = await serve(() => ({ status: 200 }));
    const b = await serve(() => ({ status: 200 }));
    const f = quick({ maxOrigins: 1 });
    await f(a.url);
    await f(b.url);
    expect(f.stats().map((s) => s.origin)).toEqual([b.origin]);
  });
});

describe('protectedFetch: what the breaker counts', () => {
  it("counts attempt timeouts, but not calls cut by the caller's own deadline", async () => {
    const server = await serve(() => ({ status: 200, delayMs: 150 }));
    const f = quick({
      retry: false,
      limit: false,
      attemptTimeout: 50,
      breaker: { window: { kind: 'time', duration: 100 } },
    });
    for (let i = 0; i < 12; i++) {
      const error = await runWithRequestContext({ timeout: 20 }, () => f(server.url)).catch(
        (e: unknown) => e,
      );
      expect((error as { code: string }).code).toBe(ErrorCode.Timeout);
    }
    expect(f.stats(server.origin)?.breaker?.state).toBe('closed');
    for (let i = 0; i < 10; i++) await f(server.url).catch(() => {});
    expect(f.stats(server.origin)?.breaker?.state).toBe('open');
  });
});

describe('protectedFetch: a retry the breaker refuses', () => {
  it('ends with the refusal, the failed responses before it released', async () => {
    const server = await serve(() => ({ status: 500, body: 200 }));
    const f = quick({ breaker: { consecutiveFailures: 2 } });
    const error = await f(server.url).catch((e: unknown) => e);
    expect((error as { code: string }).code).toBe(ErrorCode.CircuitOpen);
    expect(server.requests).toHaveLength(2);
    await expect.poll(() => server.requests.every((r) => r.aborted)).toBe(true);
  });
});

describe('protectedFetch: inputs and lifetime', () => {
  it('takes a Request, its method, headers and body', async () => {
    const server = await serve(() => ({ status: 503 }));
    const request = new Request(server.url, {
      method: 'PUT',
      headers: { 'x-id': '7' },
      body: 'from request',
    });
    await quick()(request);
    expect(server.requests).toHaveLength(1); // its body is a stream: sent once
    expect([
      server.requests[0]!.method,
      server.requests[0]!.headers['x-id'],
      server.requests[0]!.body,
    ]).toEqual(['PUT', '7', 'from request']);
    await quick()(new Request(server.url, { headers: { 'x-id': '8' } }));
    expect(server.requests.slice(1).map((r) => r.headers['x-id'])).toEqual(['8', '8', '8']);
  });

  it("wraps undici's fetch as well as the global one", async () => {
    const undici = await import('undici');
    const server = await serve((_, i) => ({ status: i === 0 ? 503 : 200, body: 'via undici' }));
    const f = quick({ fetch: undici.fetch as unknown as ProtectedFetchOptions['fetch'] });
    const res = await f(server.url);
    expect(await res.text()).toBe('via undici');
    expect(server.requests).toHaveLength(2);
  });

  it("lets the caller's signal abort a body being read", async () => {
    const server = await serve(() => ({ status: 200, body: 100 }));
    const controller = new AbortController();
    const res = await quick()(server.url, { signal: controller.signal });
    controller.abort(new Error('enough'));
    await expect(res.text()).rejects.toThrow();
  });

  it('drops every origin on dispose, and refuses calls after it', async () => {
    const server = await serve(() => ({ status: 200 }));
    const f = protectedFetch();
    await f(server.url);
    expect(f.stats()).toHaveLength(1);
    (f as unknown as Record<symbol, () => void>)[Symbol.dispose]!();
    expect(f.stats()).toEqual([]);
    await expect(f(server.url)).rejects.toMatchObject({ code: ErrorCode.Usage });
  });
});

describe('protectedFetch: hedging', () => {
  it('hedges an idempotent request, aborting the loser at the server', async () => {
    const server = await serve((_, i) => (i === 0 ? 'hang' : { status: 200, body: 'second' }));
    const f = quick({ hedge: { delay: 50 } });
    const res = await f(server.url);
    expect(await res.text()).toBe('second');
    await expect.poll(() => server.requests[0]!.aborted).toBe(true);
  });

  it('never hedges a POST without an Idempotency-Key', async () => {
    const server = await serve(() => ({ status: 200, delayMs: 150 }));
    await quick({ hedge: { delay: 20 } })(server.url, { method: 'POST', body: 'x' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('protectedFetch: deadlines across the wire', () => {
  it('sends the time left and the criticality of the request context', async () => {
    const server = await serve(() => ({ status: 200 }));
    const f = quick();
    await f(server.url);
    const plain = Number(server.requests[0]!.headers['x-timeout-ms']);
    expect(plain).toBeGreaterThan(9_000);
    expect(plain).toBeLessThanOrEqual(10_000);
    await runWithRequestContext({ timeout: 2_000, criticality: 'sheddable' }, () => f(server.url));
    expect(Number(server.requests[1]!.headers['x-timeout-ms'])).toBeLessThan(2_000);
    expect(server.requests[1]!.headers['x-criticality']).toBe('sheddable');
  });

  it('takes other header names, or none', async () => {
    const server = await serve(() => ({ status: 200 }));
    await quick({ deadlineHeader: 'grpc-timeout-ms', criticalityHeader: false })(server.url, {
      criticality: 'critical',
    });
    expect(server.requests[0]!.headers['grpc-timeout-ms']).toBeDefined();
    expect(server.requests[0]!.headers['x-timeout-ms']).toBeUndefined();
    expect(server.requests[0]!.headers['x-criticality']).toBeUndefined();
  });
});

describe('protectedFetch: options are checked when it is made', () => {
  it.each<[ProtectedFetchOptions, string, string]>([
    [{ attemptTimeout: 40_000 }, 'attemptTimeout', '[1, 30000]'],
    [{ timeout: 5_000, attemptTimeout: 6_000 }, 'attemptTimeout', '[1, 5000]'],
    [
      { breaker: { window: { kind: 'time', duration: 15_000 } } },
      'breaker.window.duration',
      '[20000, 2147483647]',
    ],
    [{ retry: { maxRetries: 11 } }, 'retry.maxRetries', '[0, 10]'],
    [{ retry: { maxDelay: 60_000 } }, 'retry.maxDelay', '[0, 30000]'],
    [{ failure: [700] }, 'failure', 'HTTP statuses'],
    [{ deadlineHeader: 'bad header' }, 'deadlineHeader', 'header name'],
    [{ timeout: -1 }, 'timeout', '[1, 2147483647]'],
  ])('%o: an OptionsError naming %s and the range', (options, option, range) => {
    const error = (() => {
      try {
        protectedFetch(options);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).option).toBe(option);
    expect((error as OptionsError).message).toContain(range);
  });

  it('checks the policies own options too', () => {
    expect(() => protectedFetch({ breaker: { breakDuration: -5 } })).toThrow(/breakDuration/);
    expect(() => protectedFetch({ limit: { initialLimit: 0 } })).toThrow(/initialLimit/);
    expect(() => protectedFetch({ bogus: 1 } as never)).toThrow(OptionsError);
  });
});
