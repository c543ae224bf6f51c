import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type RateLimitStore,
  requestContext,
  type ServiceGuardOptions,
  serviceGuard,
} from '../../../src/http/index.js';
import { adaptiveLimit, KeyedRateLimiter, OptionsError } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { onLoopback, openHanging } from '../../support/guarded-servers.js';

const allowed = {
  allowed: true,
  limit: 10,
  windowMs: 60_000,
  remaining: 9,
  retryAfterMs: 0,
  resetMs: 6_000,
  degraded: false,
};

/** A store that fails in the way given. */
function failing(how: 'throws' | 'rejects' | 'degraded'): RateLimitStore {
  return {
    decide() {
      if (how === 'throws') throw new Error('store down');
      if (how === 'rejects') return Promise.reject(new Error('store down'));
      return Promise.resolve({ ...allowed, degraded: true });
    },
  };
}

/** A store that lets everything through and records the keys it is asked about. */
function recording(keys: string[]): RateLimitStore {
  return {
    decide(key) {
      keys.push(key);
      return allowed;
    },
  };
}

const ok = () => new Response('ok');

describe('serviceGuard', () => {
  it.each([
    [{ rateLimit: { limiter: {} } }, 'rateLimit.limiter'],
    [{ rateLimit: { limiter: failing('throws'), headers: 'draft-9' } }, 'rateLimit.headers'],
    [
      { rateLimit: { limiter: failing('throws'), onStoreError: 'maybe' } },
      'rateLimit.onStoreError',
    ],
    [{ rateLimit: { limiter: failing('throws'), key: 'ip' } }, 'rateLimit.key'],
    [{ deadline: { max: -1 } }, 'deadline.max'],
    [{ deadline: { max: 0 } }, 'deadline.max'],
    [{ deadline: { header: '' } }, 'deadline.header'],
    [{ concurrency: 5 }, 'concurrency'],
    [{ criticality: 3 }, 'criticality'],
    [{ shedding: { interval: 1 } }, 'interval'],
    [{ rateLimits: {} }, 'rateLimits'],
  ])('refuses %o with an OptionsError naming %s', (options, field) => {
    expect(() => serviceGuard(options as ServiceGuardOptions)).toThrow(OptionsError);
    expect(() => serviceGuard(options as ServiceGuardOptions)).toThrow(field);
  });

  it('starts no timer before the first request, samples the event loop from it, and stops on dispose', async () => {
    const clock = new ManualClock();
    const guard = serviceGuard({ shedding: { clock } });
    expect(clock.pendingTimers).toBe(0);
    const handler = guard.fetch(ok);
    expect((await handler(new Request('http://service/'))).status).toBe(200);
    expect(clock.pendingTimers).toBe(1);
    guard.dispose();
    expect(clock.pendingTimers).toBe(0);
  });

  it.each(['throws', 'rejects', 'degraded'] as const)(
    "lets requests through when the store %s and onStoreError is 'open' (the default)",
    async (how) => {
      let runs = 0;
      const guard = serviceGuard({ rateLimit: { limiter: failing(how) } });
      const res = await guard.fetch(() => {
        runs++;
        return ok();
      })(new Request('http://service/'));
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
      expect(runs).toBe(1);
    },
  );

  it.each(['throws', 'rejects', 'degraded'] as const)(
    "answers 503 when the store %s and onStoreError is 'closed'",
    async (how) => {
      let runs = 0;
      const guard = serviceGuard({ rateLimit: { limiter: failing(how), onStoreError: 'closed' } });
      const res = await guard.fetch(() => {
        runs++;
        return ok();
      })(new Request('http://service/'));
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(((await res.json()) as { type: string }).type).toMatch(/temporary-reduced-capacity$/);
      expect(runs).toBe(0);
    },
  );

  it.each([
    ['nothing', undefined],
    ['a promise of nothing', Promise.resolve(undefined)],
    ['a remaining count of NaN', { ...allowed, remaining: Number.NaN }],
  ])('takes a store that decides %s for a failed one', async (_what, decision) => {
    const limiter = { decide: () => decision } as unknown as RateLimitStore;
    const open = serviceGuard({ rateLimit: { limiter } });
    const closed = serviceGuard({ rateLimit: { limiter, onStoreError: 'closed' } });
    expect((await open.fetch(ok)(new Request('http://service/'))).status).toBe(200);
    expect((await closed.fetch(ok)(new Request('http://service/'))).status).toBe(503);
  });

  it('keys requests by the function given, and lets a request through unlimited when it gives no key', async () => {
    const keys: string[] = [];
    const guard = serviceGuard({
      rateLimit: {
        limiter: recording(keys),
        key: (req) => req.header('x-api-key'),
      },
    });
    const handler = guard.fetch(ok);
    await handler(new Request('http://service/', { headers: { 'x-api-key': 'k1' } }));
    await handler(new Request('http://service/'));
    expect(keys).toEqual(['k1']);
  });

  it('keys requests by the client address Deno or Bun give beside the request, and shares one key where there is none', async () => {
    const keys: string[] = [];
    const guard = serviceGuard({
      rateLimit: {
        limiter: recording(keys),
      },
    });
    const handler = guard.fetch((_request: Request, _extra?: unknown) => ok());
    const request = new Request('http://service/');
    await handler(request, { remoteAddr: { hostname: '2001:db8:1:2ab::5' } });
    await handler(request, { requestIP: () => ({ address: '198.51.100.4' }) });
    await handler(request);
    expect(keys).toEqual(['2001:db8:1:200::/56', '198.51.100.4', 'unknown']);
  });

  it("holds a fetch-style handler's permit until its response is returned", async () => {
    const limit = adaptiveLimit({ initialLimit: 1, minLimit: 1, maxLimit: 1 });
    const guard = serviceGuard({ concurrency: limit });
    let answer!: (r: Response) => void;
    const handler = guard.fetch(() => new Promise<Response>((resolve) => (answer = resolve)));
    const first = handler(new Request('http://service/'));
    await until(() => answer !== undefined);
    expect((await handler(new Request('http://service/'))).status).toBe(503);
    answer(ok());
    expect((await first).status).toBe(200);
    await until(() => limit.inFlight === 0);
    const answerFirst = answer;
    const third = handler(new Request('http://service/'));
    await until(() => answer !== answerFirst);
    answer(ok());
    expect((await third).status).toBe(200);
  });

  it("gives a fetch-style handler the request's signal, deadline and criticality", async () => {
    const guard = serviceGuard();
    const controller = new AbortController();
    let seen: ReturnType<typeof requestContext>;
    await guard.fetch(() => {
      seen = requestContext();
      return ok();
    })(
      new Request('http://service/', {
        signal: controller.signal,
        headers: { 'x-timeout-ms': '250', 'x-criticality': 'critical-plus' },
      }),
    );
    expect(seen!.criticality).toBe('critical-plus');
    expect(seen!.deadline - performance.now()).toBeLessThanOrEqual(250);
    controller.abort();
    expect(seen!.signal?.aborted).toBe(true);
  });

  it("hands the response's status code to the adaptive limit's handleResult", async () => {
    const limit = adaptiveLimit<number>({ handleResult: (status) => status >= 500 });
    const guard = serviceGuard({ concurrency: limit });
    let status = 200;
    const handler = guard.fetch(() => new Response(null, { status }));
    await handler(new Request('http://service/'));
    status = 502;
    await handler(new Request('http://service/'));
    await until(() => limit.inFlight === 0);
    expect(limit.stats().samples).toMatchObject({ answered: 1, dropped: 1 });
  });

  it('does not run the handler of a client that left while the store decided', async () => {
    let decide!: (d: typeof allowed) => void;
    const guard = serviceGuard({
      rateLimit: { limiter: { decide: () => new Promise((resolve) => (decide = resolve)) } },
    });
    let runs = 0;
    const controller = new AbortController();
    const answer = guard.fetch(() => {
      runs++;
      return ok();
    })(new Request('http://service/', { signal: controller.signal }));
    await until(() => decide !== undefined);
    controller.abort();
    decide(allowed);
    expect((await answer).status).toBe(499);
    expect(runs).toBe(0);
  });

  it('does not run the handler of a client that left while queued for a permit', async () => {
    const limit = adaptiveLimit({ initialLimit: 1, minLimit: 1, maxLimit: 1, maxQueue: 1 });
    const guard = serviceGuard({ concurrency: limit });
    const answers: ((r: Response) => void)[] = [];
    const handler = guard.fetch(() => new Promise<Response>((resolve) => answers.push(resolve)));
    const first = handler(new Request('http://service/'));
    const controller = new AbortController();
    const queued = handler(new Request('http://service/', { signal: controller.signal }));
    await until(() => answers.length === 1 && limit.queueLength === 1);
    controller.abort();
    expect((await queued).status).toBe(499);
    expect(limit.queueLength).toBe(0);
    answers[0]!(ok());
    expect((await first).status).toBe(200);
    expect(answers).toHaveLength(1);
  });

  it('ignores a deadline or criticality header it cannot read, and a criticality function that throws', async () => {
    const seen: unknown[] = [];
    const handler = (guard: ReturnType<typeof serviceGuard>) =>
      guard.fetch(() => {
        const c = requestContext();
        seen.push([c?.deadline, c?.criticality]);
        return ok();
      });
    const headers = { 'x-timeout-ms': '1.5e3', 'x-criticality': 'urgent' };
    await handler(serviceGuard())(new Request('http://service/', { headers }));
    const throwing = serviceGuard({
      criticality: () => {
        throw new Error('no');
      },
    });
    await handler(throwing)(new Request('http://service/'));
    expect(seen).toEqual([
      [Number.POSITIVE_INFINITY, undefined],
      [Number.POSITIVE_INFINITY, undefined],
    ]);
  });

  describe('on a loopback server', () => {
    const servers: { close(): Promise<void> }[] = [];
    afterEach(async () => {
      for (const s of servers.splice(0)) await s.close();
    });
    const serve = async (server: Server) => {
      const served = await onLoopback(server);
      servers.push(served);
      return served.url;
    };

    it("keys requests by Express' req.ip, which reads X-Forwarded-For with trust proxy", async () => {
      const limiter = new KeyedRateLimiter({ limit: 1, period: 60_000, clock: new ManualClock() });
      const app = express();
      app.set('trust proxy', true);
      app.use(serviceGuard({ rateLimit: { limiter } }).connect);
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      const url = await serve(createServer(app));
      const from = (client: string) =>
        fetch(url, { headers: { 'x-forwarded-for': client } }).then((r) => r.status);
      expect(await from('203.0.113.1')).toBe(200);
      expect(await from('203.0.113.1')).toBe(429);
      expect(await from('2001:db8:1:2ab::1')).toBe(200);
      expect(await from('2001:db8:1:2cd::1')).toBe(429); // the same /56
      expect(await from('203.0.113.2')).toBe(200);
    });

    it("keys requests by the socket's address, not X-Forwarded-For, when Express does not trust proxies", async () => {
      const keys: string[] = [];
      const app = express();
      app.use(serviceGuard({ rateLimit: { limiter: recording(keys) } }).connect);
      app.get('/', (req, res) => {
        res.send(req.ip);
      });
      const url = await serve(createServer(app));
      const ip = await fetch(url, { headers: { 'x-forwarded-for': '203.0.113.1' } }).then((r) =>
        r.text(),
      );
      app.set('trust proxy', true);
      await fetch(url, { headers: { 'x-forwarded-for': '203.0.113.1' } });
      expect(ip).toMatch(/127\.0\.0\.1$/);
      expect(keys).toEqual([ip, '203.0.113.1']);
    });

    it('reads a header by its name in any case in a Node request, as in a fetch-style one', async () => {
      const keys: string[] = [];
      const guard = serviceGuard({
        rateLimit: { limiter: recording(keys), key: (req) => req.header('X-Api-Key') },
      });
      const url = await serve(createServer(guard.node((_req, res) => res.end('ok'))));
      await fetch(url, { headers: { 'x-api-key': 'k1' } });
      await guard.fetch(ok)(new Request(url, { headers: { 'x-api-key': 'k2' } }));
      expect(keys).toEqual(['k1', 'k2']);
    });

    it('node(handler) answers 500 to a handler that throws or rejects, and hands its error to onError', async () => {
      const errors: unknown[] = [];
      const guard = serviceGuard();
      const url = await serve(
        createServer(
          guard.node(
            async (req) => {
              if (req.url === '/throw') throw new Error('sync');
              await Promise.resolve();
              throw new Error('async');
            },
            (e) => errors.push((e as Error).message),
          ),
        ),
      );
      expect((await fetch(`${url}/throw`)).status).toBe(500);
      expect((await fetch(`${url}/reject`)).status).toBe(500);
      expect(errors).toEqual(['sync', 'async']);
    });

    it('node(handler): a signal first read after the client left is already aborted', async () => {
      const seen: boolean[] = [];
      let started!: () => void;
      let closed!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const ended = new Promise<void>((resolve) => (closed = resolve));
      const guard = serviceGuard();
      const url = await serve(
        createServer(
          guard.node((_req, res) => {
            const context = requestContext()!; // its signal is not read while the client is there
            res.on('close', () => {
              seen.push(context.signal!.aborted);
              closed();
            });
            started();
          }),
        ),
      );
      const drop = openHanging(url);
      await running;
      drop();
      await ended;
      expect(seen).toEqual([true]);
    });

    it('node(handler) does not run the handler of a client that left while the store decided', async () => {
      let decide!: (d: typeof allowed) => void;
      const guard = serviceGuard({
        rateLimit: { limiter: { decide: () => new Promise((resolve) => (decide = resolve)) } },
      });
      let runs = 0;
      const server = createServer(
        guard.node((_req, res) => {
          runs++;
          res.end('ok');
        }),
      );
      let socketClosed = false;
      server.on('connection', (socket) => socket.on('close', () => (socketClosed = true)));
      const drop = openHanging(await serve(server));
      await until(() => decide !== undefined);
      drop();
      await until(() => socketClosed); // the response's own close comes in the same emit
      decide(allowed);
      await new Promise((resolve) => setImmediate(resolve));
      expect(runs).toBe(0);
    });
  });
});

/** Waits, a turn of the event loop at a time, until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}
