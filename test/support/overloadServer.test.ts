/**
 * The loopback dependency of the HTTP overload runs. Its requests are held by service times far
 * longer than any test (then dropped by `close`) or ordered by the test, so every figure checked
 * here is a count, never a duration.
 */
import { createHook } from 'node:async_hooks';
import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { macrotask } from './async.js';
import { type OverloadServer, serviceTimes, startOverloadServer } from './overloadServer.js';
import { seededRandom } from './random.js';

/** Long enough that no request held for it is answered before the test closes the server. */
const FOREVER = 60_000;

let agent: Agent;
let server: OverloadServer | undefined;

afterEach(async () => {
  agent?.destroy();
  await server?.close();
  server = undefined;
});

/** A GET's outcome: the status once the body is read, or the error (a dropped connection). */
function get(url: string): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const req = request(url, { agent }, (res) => {
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
      res.resume();
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end();
  });
}

/** Waits (turn by turn of the event loop, with no time limit of its own) until `ready()`. */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** The open TCP handles (servers and sockets) of this process. */
function tcpHandles(): number {
  return process.getActiveResourcesInfo().filter((type) => type.startsWith('TCP')).length;
}

/** A sampling period no other timer of the test process has. */
const SAMPLER = 7;

/**
 * Follows the server's timers from creation to clearing through async hooks (its sampler is
 * unref'd, so `process.getActiveResourcesInfo()` would miss it): the service timers, of
 * {@link FOREVER}, and the sampler, repeating every {@link SAMPLER} ms.
 */
function watchTimers() {
  const service = new Set<number>();
  const sampler = new Set<number>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const timer = resource as { _idleTimeout?: number; _repeat?: number | null };
      if (timer._repeat === SAMPLER) sampler.add(id);
      else if (timer._idleTimeout === FOREVER && !timer._repeat) service.add(id);
    },
    destroy(id) {
      service.delete(id);
      sampler.delete(id);
    },
  }).enable();
  return {
    live: () => ({ service: service.size, sampler: sampler.size }),
    stop: () => hook.disable(),
  };
}

describe('overload server', () => {
  it('serves one request per worker at a time, the queue in arrival order', async () => {
    agent = new Agent({ keepAlive: true });
    server = await startOverloadServer({ workers: 1, serviceMs: 20 });
    const s = server;
    const order: string[] = [];
    const sent = ['a', 'b', 'c'].map(async (name, k) => {
      await until(() => s.stats().received === k);
      const answer = await get(s.url);
      order.push(name);
      return answer;
    });
    expect(await Promise.all(sent)).toEqual([{ status: 200 }, { status: 200 }, { status: 200 }]);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(s.stats()).toMatchObject({
      received: 3,
      served: 3,
      rejected: 0,
      abandoned: 0,
      inFlight: 0,
      maxInService: 1,
      queued: 0,
    });
    expect(s.stats().maxInFlight).toBeGreaterThanOrEqual(1);
  });

  it('counts every request held at once as in flight, at most `workers` of them in service', async () => {
    agent = new Agent({ keepAlive: true });
    server = await startOverloadServer({ workers: 3, serviceMs: FOREVER });
    const s = server;
    const answers = Array.from({ length: 7 }, () => get(s.url));
    await until(() => s.stats().received === 7);
    expect(s.stats()).toMatchObject({
      inFlight: 7,
      maxInFlight: 7,
      inService: 3,
      maxInService: 3,
      queued: 4,
      served: 0,
    });
    await s.close();
    expect((await Promise.all(answers)).every((a) => 'error' in a)).toBe(true);
  });

  it('answers 503 at once to a request beyond workers + maxQueue, and holds the others', async () => {
    agent = new Agent({ keepAlive: true });
    server = await startOverloadServer({ workers: 1, maxQueue: 1, serviceMs: FOREVER });
    const s = server;
    const answers = Array.from({ length: 5 }, () => get(s.url));
    await until(() => s.stats().rejected === 3);
    expect(s.stats()).toMatchObject({
      received: 5,
      rejected: 3,
      served: 0,
      inService: 1,
      queued: 1,
      inFlight: 2,
      maxInFlight: 2,
    });
    await s.close();
    const outcomes = await Promise.all(answers);
    expect(outcomes.filter((o) => 'status' in o && o.status === 503)).toHaveLength(3);
    expect(outcomes.filter((o) => 'error' in o)).toHaveLength(2);
    await until(() => s.stats().abandoned === 2);
  });

  it('takes a request its client abandoned out of the queue; one in service keeps its worker', async () => {
    agent = new Agent({ keepAlive: true });
    server = await startOverloadServer({ workers: 1, serviceMs: FOREVER });
    const s = server;
    /** A GET its test aborts; resolves once the client has seen the abort. */
    const abortable = () => {
      const controller = new AbortController();
      const ended = new Promise<void>((resolve) => {
        const req = request(s.url, { agent, signal: controller.signal }, () => {});
        req.on('error', () => resolve());
        req.end();
      });
      return { abort: () => controller.abort(), ended };
    };
    const serving = abortable();
    await until(() => s.stats().inService === 1);
    const waiting = abortable();
    await until(() => s.stats().queued === 1);
    waiting.abort();
    await waiting.ended;
    await until(() => s.stats().abandoned === 1);
    expect(s.stats()).toMatchObject({ inService: 1, queued: 0, inFlight: 1 });
    serving.abort();
    await serving.ended;
    await until(() => s.stats().abandoned === 2);
    expect(s.stats()).toMatchObject({ inService: 1, queued: 0, inFlight: 1 });
    const next = get(s.url);
    await until(() => s.stats().queued === 1);
    expect(s.stats()).toMatchObject({ received: 3, inService: 1, inFlight: 2, served: 0 });
    await s.close();
    expect(await next).toHaveProperty('error');
  });

  it('samples the mean and the most of its in-flight work over every sampleEveryMs', async () => {
    agent = new Agent({ keepAlive: true });
    server = await startOverloadServer({ workers: 1, serviceMs: FOREVER, sampleEveryMs: 5 });
    const s = server;
    const answers = [get(s.url), get(s.url), get(s.url)];
    // A period that began once all three were in has a mean of exactly 3.
    await until(() => s.stats().samples.some((x) => x.mean === 3));
    const { samples } = s.stats();
    expect(samples.every((x) => x.mean >= 0 && x.mean <= x.max && x.max <= 3)).toBe(true);
    expect(samples.every((x, k) => k === 0 || x.at > samples[k - 1]!.at)).toBe(true);
    await s.close();
    await Promise.all(answers);
  });

  it('closes cleanly with requests in service and queued: no socket, server or timer left', async () => {
    // The sockets of the tests before close a few turns after their servers.
    await until(() => tcpHandles() === 0);
    const timers = watchTimers();
    agent = new Agent({ keepAlive: true });
    server = await startOverloadServer({ workers: 2, serviceMs: FOREVER, sampleEveryMs: SAMPLER });
    const s = server;
    const answers = Array.from({ length: 5 }, () => get(s.url));
    await until(() => s.stats().received === 5);
    expect(tcpHandles()).toBeGreaterThan(0);
    expect(timers.live()).toEqual({ service: 2, sampler: 1 });
    await s.close();
    server = undefined;
    await Promise.all(answers);
    agent.destroy();
    const left = () => ({ tcp: tcpHandles(), ...timers.live() });
    for (
      let turn = 0;
      turn < 100 && JSON.stringify(left()) !== '{"tcp":0,"service":0,"sampler":0}';
      turn++
    ) {
      await macrotask();
    }
    timers.stop();
    expect(left()).toEqual({ tcp: 0, service: 0, sampler: 0 });
  });

  it('draws exponential service times of the given mean from its seeded source', () => {
    const draw = serviceTimes({
      serviceMs: 20,
      distribution: 'exponential',
      random: seededRandom(5),
    });
    const again = serviceTimes({
      serviceMs: 20,
      distribution: 'exponential',
      random: seededRandom(5),
    });
    const draws = Array.from({ length: 100_000 }, draw);
    expect(draws.slice(0, 5)).toEqual(Array.from({ length: 5 }, again));
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean - 20)).toBeLessThan(0.3);
    expect(draws.every((d) => d >= 0 && Number.isFinite(d))).toBe(true);
    expect(serviceTimes({ serviceMs: 20 })()).toBe(20);
  });

  it('draws uniform service times within half the mean either side, from its seeded source', () => {
    const draw = serviceTimes({ serviceMs: 100, distribution: 'uniform', random: seededRandom(5) });
    const draws = Array.from({ length: 100_000 }, draw);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean - 100)).toBeLessThan(0.5);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...draws)).toBeLessThan(150);
    // Both halves of the range are drawn about equally.
    const low = draws.filter((d) => d < 100).length / draws.length;
    expect(Math.abs(low - 0.5)).toBeLessThan(0.01);
  });

  it.each([
    [{ workers: 0, serviceMs: 20 }, 'workers must be in [1, 100000], whole: 0'],
    [{ workers: 1.5, serviceMs: 20 }, 'workers must be in [1, 100000], whole: 1.5'],
    [{ workers: 1, serviceMs: -1 }, 'serviceMs must be in [0, 60000]: -1'],
    [{ workers: 1, serviceMs: 20, maxQueue: -1 }, 'maxQueue must be in [0, Infinity], whole: -1'],
    [{ workers: 1, serviceMs: 20, sampleEveryMs: 0 }, 'sampleEveryMs must be in [1, 60000]: 0'],
  ])('refuses %j: %s', async (options, message) => {
    await expect(startOverloadServer(options)).rejects.toThrow(new RangeError(message));
  });
});
