/**
 * `/events`, the dashboard's Server-Sent Events stream, on a real `node:http` server: what it
 * sends, its one shared timer, client limits and `close()`.
 */
import { createHook } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Registry, type RegistryConfig } from '../../src/index.js';
import {
  createObservabilityHandler,
  type ObservabilityHandler,
} from '../../src/observability/index.js';
import { deferred, macrotask } from '../support/async.js';
import { fail, openStream, type Served, type Stream, serve, succeed, until } from './support.js';

const CONFIG: RegistryConfig = {
  defaults: {
    circuitBreaker: { window: { kind: 'consecutive', threshold: 2 }, breakDuration: '1m' },
  },
  bulkheads: { db: { maxConcurrent: 4 } },
};

/** An interval no other timer of these tests uses, to tell the feed's timer apart. */
const INTERVAL = 137;

let registry: Registry;
let handler: ObservabilityHandler;
let served: Served;
let streams: Stream[];

async function start(options?: Parameters<typeof createObservabilityHandler>[1]) {
  handler = createObservabilityHandler(registry, { interval: INTERVAL, ...options });
  served = await serve((req, res) => handler(req, res));
}

async function open(): Promise<Stream> {
  const stream = await openStream(`${served.url}/events`);
  streams.push(stream);
  return stream;
}

beforeEach(() => {
  registry = new Registry(CONFIG);
  registry.circuitBreaker('payments');
  registry.bulkhead('db');
  streams = [];
});

afterEach(async () => {
  for (const s of streams) s.close();
  handler?.close();
  await served?.close();
  registry.dispose();
});

/**
 * Follows the feed's interval timer (a `setInterval` of {@link INTERVAL} ms) from its creation
 * to its clearing through async hooks: `process.getActiveResourcesInfo()` lists only timers
 * that keep the process alive, and an unref'd one never shows there.
 */
function watchFeedTimers() {
  const live = new Map<number, { hasRef(): boolean }>();
  let created = 0;
  const hook = createHook({
    init(id, type, _trigger, resource) {
      const timer = resource as { _repeat?: number | null; hasRef(): boolean };
      if (type === 'Timeout' && timer._repeat === INTERVAL) {
        live.set(id, timer);
        created++;
      }
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  return {
    get live() {
      return live.size;
    },
    get created() {
      return created;
    },
    anyRef: () => [...live.values()].some((t) => t.hasRef()),
    stop: () => hook.disable(),
  };
}

describe('GET /events', () => {
  it('answers an event stream and sends a snapshot with every instance at once', async () => {
    // An interval longer than the wait: the first snapshot cannot be the timer's.
    await start({ interval: 60_000 });
    const stream = await open();
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.response.headers.get('cache-control')).toBe('no-store');
    const first = JSON.parse((await stream.next('snapshot', 5000)).data);
    expect(first.instances.map((i: { name: string }) => i.name).sort()).toEqual(['db', 'payments']);
    expect(first.transitions).toEqual([]);
    expect(Math.abs(first.at - Date.now())).toBeLessThan(5000);
  });

  it("sends each instance's dashboard row, made by its kind, and the kinds in words", async () => {
    await start({ interval: 60_000 });
    await succeed(registry, 'payments', 2);
    const stream = await open();
    const first = JSON.parse((await stream.next('snapshot', 5000)).data);
    expect(first.kinds).toMatchObject({ circuitBreaker: 'circuit breaker', bulkhead: 'bulkhead' });
    const byName = (name: string) => first.instances.find((i: { name: string }) => i.name === name);
    expect(byName('payments').row).toEqual({
      calls: 2,
      rejected: 0,
      failed: 0,
      detail: '0 failed / 2 in window',
    });
    expect(byName('db').row).toEqual({
      calls: 0,
      rejected: 0,
      levels: { 'in flight': 0, limit: 4, queued: 0 },
      levelsLabel: 'calls in flight',
      detail: '0 / 4 in flight, 0 queued',
    });
    // The row is the dashboard's: /health lists the instances without it.
    const health = (await (await fetch(`${served.url}/health`)).json()) as { instances: object[] };
    expect(health.instances.every((i: object) => !('row' in i))).toBe(true);
  });

  it("sends a retry budget's row: calls, refusals, grants as its trend, model and balance", async () => {
    const budget = registry.retryBudget('payments');
    await start({ interval: 60_000 });
    const stream = await open();
    const first = JSON.parse((await stream.next('snapshot', 5000)).data);
    expect(first.kinds).toMatchObject({ retryBudget: 'retry budget' });
    const row = first.instances.find(
      (i: { kind: string; name: string }) => i.kind === 'retryBudget' && i.name === 'payments',
    ).row;
    expect(row).toEqual({
      calls: 0,
      rejected: 0,
      trend: 0,
      trendLabel: 'extra attempts allowed per second',
      levels: { balance: 10, 'extra in flight': 0 },
      levelsLabel: 'budget',
      detail: 'window: balance 10, 0 extra in flight, 0 allowed, 0 refused',
    });
    expect(budget.stats().balance).toBe(10);
  });

  it('sends the recent transitions in the first snapshot only', async () => {
    await start();
    await fail(registry, 'payments', 2);
    const stream = await open();
    const first = JSON.parse((await stream.next()).data);
    expect(first.transitions).toMatchObject([{ name: 'payments', from: 'closed', to: 'open' }]);
    const second = JSON.parse((await stream.next()).data);
    expect(second.transitions).toBeUndefined();
  });

  it('sends a fresh snapshot every interval, with the counters as they are', async () => {
    await start();
    const stream = await open();
    const first = JSON.parse((await stream.next()).data);
    await succeed(registry, 'payments', 3);
    const second = JSON.parse((await stream.next()).data);
    const third = JSON.parse((await stream.next()).data);
    expect(second.at).toBeGreaterThan(first.at);
    expect(third.at - second.at).toBeGreaterThanOrEqual(INTERVAL - 20);
    const payments = second.instances.find((i: { name: string }) => i.name === 'payments');
    expect(payments.stats.successes).toBe(3);
  });

  it('sends a transition event as soon as a breaker trips', async () => {
    await start({ interval: 60_000 });
    const stream = await open();
    await stream.next();
    await fail(registry, 'payments', 2);
    const event = JSON.parse((await stream.next('transition', 1000)).data);
    expect(event).toMatchObject({ name: 'payments', from: 'closed', to: 'open' });
    expect(event.key).toBeUndefined();
    expect(typeof event.reason).toBe('string');
  });

  it('sends transitions of keyed breakers with their key', async () => {
    await start({ interval: 60_000 });
    const stream = await open();
    await stream.next();
    registry.keyedCircuitBreaker('api', 'tenant-7').forceOpen();
    const event = JSON.parse((await stream.next('transition', 1000)).data);
    expect(event).toMatchObject({ name: 'api', key: 'tenant-7', to: 'forced-open' });
  });

  it('sends every event to every connected client', async () => {
    await start({ interval: 60_000 });
    const a = await open();
    const b = await open();
    await Promise.all([a.next(), b.next()]);
    registry.circuitBreaker('payments').forceOpen();
    const [ea, eb] = await Promise.all([a.next('transition'), b.next('transition')]);
    expect(ea.data).toBe(eb.data);
  });

  it('writes names and keys so that no data line can hold markup or a line break', async () => {
    await start();
    const key = '</script><img src=x onerror=alert(1)>\n"\u2028';
    registry.keyedCircuitBreaker('api', key).forceOpen();
    const stream = await open();
    const raw = (await stream.next()).data;
    expect(raw).not.toMatch(/[<>\n\u2028]/);
    const instance = JSON.parse(raw).instances.find((i: { name: string }) => i.name === 'api');
    expect(instance.key).toBe(key);
  });
});

describe('the shared timer', () => {
  it("is one unref'd timer for all clients, cleared when the last client leaves", async () => {
    const timers = watchFeedTimers();
    try {
      await start();
      expect(timers.live).toBe(0);
      const a = await open();
      const b = await open();
      await Promise.all([a.next(), b.next()]);
      expect(timers.live).toBe(1);
      expect(timers.created).toBe(1);
      // Unref'd: it never keeps the process alive.
      expect(timers.anyRef()).toBe(false);

      a.close();
      await until(() => handler.clients === 1);
      expect(timers.live).toBe(1);
      await b.next();

      b.close();
      await until(() => handler.clients === 0);
      await until(() => timers.live === 0);

      // A new client starts a new timer.
      const c = await open();
      await c.next();
      expect(timers.live).toBe(1);
      expect(timers.created).toBe(2);
    } finally {
      timers.stop();
    }
  });

  it('stops sending transitions to nobody once every client has left', async () => {
    await start();
    const a = await open();
    await a.next();
    a.close();
    await until(() => handler.clients === 0);
    // A transition with no client left must not fail nor be kept for later clients.
    registry.circuitBreaker('payments').forceOpen();
    registry.circuitBreaker('payments').reset();
    const b = await open();
    const first = JSON.parse((await b.next()).data);
    expect(first.transitions.map((t: { to: string }) => t.to)).toEqual(['forced-open', 'closed']);
    await b.next();
    expect(b.received.filter((e) => e.event === 'transition')).toEqual([]);
  });
});

describe('limits and close()', () => {
  it('refuses one client more than maxClients with 503 and Retry-After', async () => {
    await start({ maxClients: 2 });
    await open();
    await open();
    const third = await fetch(`${served.url}/events`);
    expect(third.status).toBe(503);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(handler.clients).toBe(2);
  });

  it('takes a client again once one has left', async () => {
    await start({ maxClients: 1 });
    const a = await open();
    await a.next();
    a.close();
    await until(() => handler.clients === 0);
    const b = await open();
    expect(b.response.status).toBe(200);
  });

  it('close() ends every stream, clears the timer and refuses new streams', async () => {
    const timers = watchFeedTimers();
    try {
      await start();
      const a = await open();
      const b = await open();
      await Promise.all([a.next(), b.next()]);
      handler.close();
      await Promise.all([a.ended, b.ended]);
      expect(handler.clients).toBe(0);
      await until(() => timers.live === 0);
      const again = await fetch(`${served.url}/events`);
      expect(again.status).toBe(503);
      // The rest of the handler still answers.
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
      handler.close();
    } finally {
      timers.stop();
    }
  });

  it('lets server.close() finish once close() has ended the streams', async () => {
    await start();
    const a = await open();
    await a.next();
    handler.close();
    await new Promise<void>((resolve, reject) =>
      served.server.close((error) => (error ? reject(error) : resolve())),
    );
    await a.ended;
    served = { ...served, close: async () => {} };
  });
});

describe('clients that leave before the handler runs', () => {
  /**
   * A server with an asynchronous step in front of the handler (an authentication check, a
   * framework hook): each request waits at a gate the test opens.
   */
  async function startGated() {
    handler = createObservabilityHandler(registry, { interval: INTERVAL });
    const waiting: { req: IncomingMessage; res: ServerResponse; open(): void }[] = [];
    served = await serve(async (req, res) => {
      const gate = deferred<void>();
      waiting.push({ req, res, open: () => gate.resolve() });
      await gate.promise;
      handler(req, res);
    });
    return waiting;
  }

  /** Sends GET /events on a raw socket and drops the connection once the server has it. */
  async function leaveBeforeHandler(waiting: { res: ServerResponse; open(): void }[]) {
    const before = waiting.length;
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await until(() => waiting.length === before + 1);
    const request = waiting[before]!;
    const gone = new Promise<void>((resolve) => request.res.once('close', () => resolve()));
    socket.destroy();
    // The server has seen the client go before the gate lets the request on.
    await gone;
    request.open();
    await macrotask();
  }

  it('counts none of them, still serves a dashboard after maxClients of them, and starts no timer', async () => {
    const timers = watchFeedTimers();
    try {
      const waiting = await startGated();
      for (let i = 0; i < 32; i++) await leaveBeforeHandler(waiting);
      expect(handler.clients).toBe(0);
      expect(timers.created).toBe(0);

      // The 33rd client, the default maxClients plus one, gets its stream.
      const pending = openStream(`${served.url}/events`);
      await until(() => waiting.length === 33);
      waiting[32]!.open();
      const stream = await pending;
      streams.push(stream);
      expect(stream.response.status).toBe(200);
      await stream.next();
      expect(handler.clients).toBe(1);

      // When it leaves, nobody is left and the timer stops.
      stream.close();
      await until(() => handler.clients === 0);
      await until(() => timers.live === 0);
    } finally {
      timers.stop();
    }
  });
});
