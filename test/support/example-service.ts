/**
 * What a user of an example service (examples/<name>/server.mjs) checks, run against the real
 * thing: the example as a child process, two flaky downstreams on loopback and a real
 * redis-server. Each example's test file calls {@link describeExampleService} with its script.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { readRateLimit } from '../../src/http/index.js';
import { root } from './build.js';
import { type FlakyDownstream, startFlakyDownstream } from './flaky-downstream.js';
import { describeRedis } from './redis-server.js';
import { type ServiceProcess, startService } from './service-process.js';

/** Requests one API key may make per minute, as the examples are started here. */
const LIMIT = 3;
/** The inbound deadline of the request whose downstream hangs, ms. */
const DEADLINE_MS = 4_000;

/** The requests left that a response's `RateLimit` headers report. */
function remaining(res: Response): number | undefined {
  return readRateLimit(res.headers)?.policies[0]?.remaining;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** True when `res` is the service guard's own refusal at its concurrency limit (read from a clone). */
async function refusedForLoad(res: Response): Promise<boolean> {
  if (res.status !== 503) return false;
  const body = await res.clone().text();
  return body.includes('the service is at its concurrency limit');
}

/** Resolves once `condition` holds, polling every 10 ms; rejects after `limitMs`. */
async function eventually(condition: () => boolean, what: string, limitMs = 10_000) {
  const end = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(10);
  }
}

/** The tests of one example service, `script` a path from the repository's root. */
export function describeExampleService(name: string, script: string): void {
  describeRedis(name, (redis) => {
    let inventory: FlakyDownstream;
    let pricing: FlakyDownstream;
    let service: ServiceProcess | undefined;

    // A bound far above any answer's time, so that a service that hangs fails the test clearly.
    // Requests are critical-plus, which the service's load shedder never sheds; and the
    // service's own refusal at its concurrency limit (503), which its adaptive limit gives on a
    // busy machine whose latency swings, is sent again after its Retry-After,
    // as a client honouring it would: overload is not under test here, but in the one test that
    // sends with `once`.
    const send = async (
      path: string,
      headers: Record<string, string>,
      signal: AbortSignal,
      once = false,
    ): Promise<Response> => {
      for (let tries = 1; ; tries++) {
        const res = await fetch(`${service!.url}${path}`, {
          headers: { 'x-criticality': 'critical-plus', ...headers },
          signal,
        });
        if (once || tries === 5 || !(await refusedForLoad(res))) return res;
        await sleep(1_000 * Number(res.headers.get('retry-after') ?? 1));
      }
    };
    const get = (path: string, headers: Record<string, string> = {}, once = false) =>
      send(path, headers, AbortSignal.timeout(15_000), once);

    beforeAll(async () => {
      if (!existsSync(`${root}dist/http/index.js`)) {
        throw new Error('The package is not built (missing dist/http/index.js): run npm run build');
      }
      inventory = await startFlakyDownstream('inventory');
      pricing = await startFlakyDownstream('pricing');
      service = await startService(script, root, {
        PORT: '0',
        REDIS_URL: redis().url,
        INVENTORY_URL: inventory.url,
        PRICING_URL: pricing.url,
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
      });
    });

    afterAll(async () => {
      await service?.stop('SIGKILL');
      await inventory?.close();
      await pricing?.close();
    });

    beforeEach(() => {
      for (const downstream of [inventory, pricing]) {
        downstream.reset();
        downstream.mode = 'flaky';
        downstream.failShare = 0;
      }
    });

    it('answers although each downstream fails every other request, by retrying the failed ones', async () => {
      inventory.failShare = 0.5;
      pricing.failShare = 0.5;
      const res = await get('/products/42', { 'x-api-key': 'retries' });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        id: '42',
        stock: { from: 'inventory' },
        price: { from: 'pricing' },
      });
      // The first request of each failed (503) and its retry succeeded.
      expect(inventory.received.map((r) => r.status)).toEqual([503, 200]);
      expect(pricing.received.map((r) => r.status)).toEqual([503, 200]);
    });

    it('refuses the request past an API key’s limit with 429, Retry-After and RateLimit headers; another key goes on', async () => {
      const left: (number | undefined)[] = [];
      for (let i = 1; i <= LIMIT; i++) {
        const res = await get('/products/1', { 'x-api-key': 'limited' });
        expect(res.status).toBe(200);
        left.push(remaining(res));
        await res.body?.cancel();
      }
      // What is left, counted in Redis, on every allowed answer.
      expect(left).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
      const calls = inventory.received.length;
      const refused = await get('/products/1', { 'x-api-key': 'limited' });
      expect(refused.status).toBe(429);
      // The GCRA's wait for the next permit: one minute / LIMIT at most.
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60 / LIMIT);
      expect(remaining(refused)).toBe(0);
      expect(refused.headers.get('ratelimit-policy')).not.toBeNull();
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await refused.json()).toMatchObject({ status: 429 });
      // Refused before the handler: no downstream call.
      expect(inventory.received.length).toBe(calls);

      const other = await get('/products/1', { 'x-api-key': 'other' });
      expect(other.status).toBe(200);
      expect(remaining(other)).toBe(LIMIT - 1);
      await other.body?.cancel();
    });

    it('does no downstream call for a request whose deadline has passed (x-timeout-ms: 0)', async () => {
      const res = await get('/products/7', { 'x-api-key': 'late', 'x-timeout-ms': '0' });
      expect(res.status).toBe(504);
      expect(await res.json()).toMatchObject({ status: 504 });
      expect(inventory.received.length + pricing.received.length).toBe(0);
    });

    it('sends the time left downstream and gives up on a hung downstream at the inbound deadline', async () => {
      pricing.mode = 'hang';
      // Long enough that even a stalled machine makes the calls before the deadline.
      const res = await get('/products/9', {
        'x-api-key': 'deadline',
        'x-timeout-ms': String(DEADLINE_MS),
      });
      expect(res.status).toBe(504);
      expect(await res.json()).toMatchObject({ status: 504, code: 'ERR_BREAKWATER_TIMEOUT' });
      expect(pricing.received.length).toBeGreaterThan(0);
      for (const request of pricing.received) {
        const left = Number(request.headers['x-timeout-ms']);
        expect(left).toBeGreaterThanOrEqual(0);
        expect(left).toBeLessThanOrEqual(DEADLINE_MS);
      }
      // The hung calls were aborted, not left open.
      await eventually(
        () => pricing.received.every((r) => r.abandoned),
        'the hung downstream calls closed',
      );
    });

    it('answers 502 when a downstream fails every attempt', async () => {
      pricing.failShare = 1;
      const res = await get('/products/5', { 'x-api-key': 'failing' });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ status: 502, code: 'ERR_BREAKWATER_HTTP_STATUS' });
      expect(pricing.received.map((r) => r.status)).toEqual([503, 503, 503]);
    });

    it('aborts the downstream calls of a request whose client went away', async () => {
      pricing.mode = 'hang';
      const client = new AbortController();
      send('/products/3', { 'x-api-key': 'gone' }, client.signal).catch(() => {});
      await eventually(() => pricing.received.length === 1, 'the downstream call made');
      client.abort();
      // Without the disconnect, the call would hang for the protected fetch's 30 s deadline.
      await eventually(() => pricing.received[0]!.abandoned, 'the downstream call aborted');
    });

    it('refuses the requests beyond its concurrency limit with 503 and Retry-After, before any downstream call', async () => {
      // Requests that hang (until their deadline) fill the adaptive limit; the rest are refused.
      pricing.mode = 'hang';
      const crowd = 40;
      const answers = await Promise.all(
        Array.from({ length: crowd }, async (_, i) => {
          const res = await get(
            '/products/5',
            { 'x-api-key': `crowd-${i}`, 'x-timeout-ms': String(DEADLINE_MS) },
            true,
          );
          const retryAfter = res.headers.get('retry-after');
          return { status: res.status, retryAfter, body: await res.text() };
        }),
      );
      const refused = answers.filter((a) => a.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      for (const answer of refused) {
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(JSON.parse(answer.body)).toMatchObject({ status: 503 });
      }
      expect(pricing.received.length).toBeLessThanOrEqual(crowd - refused.length);
    });

    it('serves /ops/health as JSON listing its policies', async () => {
      const res = await get('/ops/health');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const health = (await res.json()) as { instances: { kind: string; name: string }[] };
      const instances = health.instances.map(({ kind, name }) => `${kind} ${name}`);
      expect(instances).toEqual(
        expect.arrayContaining([
          'redisRateLimiter api-keys',
          'adaptiveLimit inbound',
          'loadShedder inbound',
        ]),
      );
    });

    it('answers without RateLimit headers while Redis is away, and counts in Redis again once it is back', async () => {
      await redis().kill();
      const res = await get('/products/2', { 'x-api-key': 'redis-away' });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
      await res.body?.cancel();

      await redis().restart();
      let left: number | undefined;
      for (let n = 0, end = Date.now() + 15_000; left === undefined; n++) {
        if (Date.now() > end) throw new Error('no RateLimit headers 15 s after Redis came back');
        // A fresh key each time: the answers given without Redis count nowhere.
        const again = await get('/products/2', { 'x-api-key': `redis-back-${n}` });
        expect(again.status).toBe(200);
        left = remaining(again);
        await again.body?.cancel();
        if (left === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(left).toBe(LIMIT - 1);
    });

    it('exits by itself on SIGTERM: no timer or connection left running', async () => {
      const exit = await service!.stop('SIGTERM');
      expect(exit.killed, exit.stderr).toBe(false);
      expect(exit.code, exit.stderr).toBe(0);
      // Only the service's own lines about Redis (away in the test before).
      expect(
        exit.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('redis: ')),
      ).toEqual([]);
    });
  });
}
