/**
 * RedisBulkhead on a real Redis server, with both clients. Two bulkheads of one name on one
 * client stand for two processes sharing it (each has its own instance id). Time of the
 * bulkheads (polls, heartbeats, queue timeouts) is a ManualClock where a test steps it; the
 * leases themselves run on the server's clock, so a lease ending is made by moving its score
 * into the past.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BulkheadRejectedError, OptionsError, pipeline } from '../../../src/index.js';
import {
  BULKHEAD_ACQUIRE_SCRIPT,
  BULKHEAD_ACQUIRE_SCRIPT_SHA,
  BULKHEAD_RELEASE_SCRIPT,
  BULKHEAD_RELEASE_SCRIPT_SHA,
  BULKHEAD_RENEW_SCRIPT,
  BULKHEAD_RENEW_SCRIPT_SHA,
  PermitLostError,
  type PermitLostEvent,
  RedisBulkhead,
  type RedisPermit,
  type StoreStateEvent,
} from '../../../src/redis/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { track } from '../../support/async.js';
import { seededRandom } from '../../support/random.js';
import { bulkheadsForEachTest, pausedClock, until } from '../../support/redis-bulkhead.js';
import { clients } from '../../support/redis-clients.js';
import { describeRedis } from '../../support/redis-server.js';
import { recordUnhandledRejections } from '../../support/rejections.js';

const unhandled = recordUnhandledRejections();

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

describe('RedisBulkhead scripts', () => {
  it('names each script by the SHA1 of its text', () => {
    expect(sha1(BULKHEAD_ACQUIRE_SCRIPT)).toBe(BULKHEAD_ACQUIRE_SCRIPT_SHA);
    expect(sha1(BULKHEAD_RENEW_SCRIPT)).toBe(BULKHEAD_RENEW_SCRIPT_SHA);
    expect(sha1(BULKHEAD_RELEASE_SCRIPT)).toBe(BULKHEAD_RELEASE_SCRIPT_SHA);
  });
});

describe('RedisBulkhead options', () => {
  const client = { evalsha: () => 0, eval: () => 0, scriptLoad: () => '' };
  it.each([
    ['maxConcurrent', 0, 'an integer in [1, 2147483647]'],
    ['maxConcurrent', 1.5, 'an integer in [1, 2147483647]'],
    ['maxQueue', -1, 'an integer in [0, 2147483647]'],
    ['lease', 500, 'a number of ms in [600,'],
    ['timeout', 0, 'a number of ms in [1,'],
    ['queueTimeout', 0, 'or Infinity'],
    ['pollInterval', Number.NaN, 'a number of ms in [1,'],
    ['instances', 0, 'an integer in [1, 2147483647]'],
    ['onStoreFailure', 'maybe', '"local"'],
    ['name', 'a{b}', 'without `{` or `}`'],
    ['prefix', 'x}', 'without `{` or `}`'],
    ['subscriber', 42, 'an ioredis or node-redis client'],
    ['instanceId', '', 'a string of 1 to 128 characters'],
  ])(
    'refuses %s = %s at construction with an OptionsError naming it and the range',
    (field, value, range) => {
      let error: unknown;
      try {
        new RedisBulkhead({ client, [field]: value } as never);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).message).toContain(field);
      expect((error as OptionsError).message).toContain(range);
    },
  );

  it('refuses a client of no known shape, naming the shapes it takes', () => {
    expect(() => new RedisBulkhead({ client: {} as never })).toThrow(
      /evalsha, eval and scriptLoad/,
    );
  });

  it.each(['name', 'prefix'])(
    'refuses a %s longer than keys may be (1 MiB) with an OptionsError naming it, the value and the range',
    (field) => {
      const long = 'x'.repeat(1 << 20);
      let error: unknown;
      try {
        new RedisBulkhead({ client: client as never, [field]: long });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(OptionsError);
      expect(error).toMatchObject({ option: field, value: long });
      expect((error as OptionsError).message).toContain('1024 characters');
      expect((error as OptionsError).message.length).toBeLessThan(400);
      expect(
        () => new RedisBulkhead({ client: client as never, [field]: 'x'.repeat(1024) }),
      ).not.toThrow();
    },
  );

  it('refuses an unknown option, naming it', () => {
    expect(() => new RedisBulkhead({ client, maxConcurent: 3 } as never)).toThrow(OptionsError);
  });

  it('draws its instance id from no seeded random: two bulkheads with the same seed get different ids', () => {
    const a = new RedisBulkhead({ client: client as never, random: seededRandom(7) });
    const b = new RedisBulkhead({ client: client as never, random: seededRandom(7) });
    expect(a.instanceId).not.toBe(b.instanceId);
  });
});

describeRedis('RedisBulkhead', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const { bulkhead } = bulkheadsForEachTest(redis, factory, 'bh');

    it('shares maxConcurrent between two instances, refuses the next call as full, and admits again after a release', async () => {
      const a = bulkhead({ maxConcurrent: 3 });
      const b = bulkhead({ maxConcurrent: 3 });
      const p1 = await a.acquire();
      const p2 = await b.acquire();
      const p3 = await a.acquire();
      await expect(b.acquire()).rejects.toMatchObject({ reason: 'full' });
      await expect(a.acquire()).rejects.toBeInstanceOf(BulkheadRejectedError);
      expect(a.stats()).toMatchObject({ inFlight: 2, admitted: 2 });
      expect(b.stats()).toMatchObject({ inFlight: 1, rejectionsByReason: { full: 1 } });
      await p2.release();
      const p4 = await a.acquire();
      expect(p4.local).toBe(false);
      for (const p of [p1, p3, p4]) p.release();
    });

    it('gives each permit a fencing token above every earlier one, across instances', async () => {
      const a = bulkhead({ maxConcurrent: 2 });
      const b = bulkhead({ maxConcurrent: 2 });
      const tokens: number[] = [];
      for (let i = 0; i < 20; i++) {
        const permit = await (i % 2 === 0 ? a : b).acquire();
        tokens.push(permit.fencingToken!);
        permit.release();
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    });

    it('keeps fencing tokens increasing after the data is lost (FLUSHALL)', async () => {
      const a = bulkhead({ maxConcurrent: 2 });
      const before = await a.acquire();
      before.release();
      await redis().command('FLUSHALL');
      const after = await a.acquire();
      expect(after.fencingToken).toBeGreaterThan(before.fencingToken!);
      after.release();
    });

    it('gives every key it writes a TTL, and leaves no permit behind once all are released', async () => {
      const a = bulkhead({ maxConcurrent: 2, lease: 3_000, maxQueue: 1 });
      const permits = [await a.acquire(), await a.acquire()];
      // A call waiting: the instance is in the waiting set too.
      const waiting = track(a.acquire());
      await until(() => a.queueLength === 1);
      for (const key of Object.values(a.keys)) {
        const ttl = (await redis().command('PTTL', key)) as number;
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(6_000);
      }
      await Promise.all(permits.map((p) => p.release()));
      await until(() => waiting.settled);
      await (waiting.value as RedisPermit).release();
      expect(a.inFlight).toBe(0);
      expect(await redis().command('ZCARD', a.keys.permits)).toBe(0);
    });

    it('wakes a waiting call by pub/sub when another instance releases (the poll is an hour away)', async () => {
      const clock = new ManualClock();
      const a = bulkhead({ maxConcurrent: 1, maxQueue: 1, pollInterval: 3_600_000, clock });
      const b = bulkhead({ maxConcurrent: 1 });
      const held = await b.acquire();
      const waiting = track(a.acquire());
      await until(() => a.queueLength === 1);
      // The subscription is made when the first call waits: it must reach the server first.
      await subscribed(redis, a.channel);
      held.release();
      await until(() => waiting.settled);
      expect(waiting.ok).toBe(true);
      (waiting.value as RedisPermit).release();
    });

    it('hands a freed permit to the instance that has waited longest, and wakes no other', async () => {
      const clock = new ManualClock();
      const waiter = () =>
        bulkhead({ maxConcurrent: 1, maxQueue: 1, pollInterval: 3_600_000, clock });
      const [b, c] = [waiter(), waiter()];
      const a = bulkhead({ maxConcurrent: 1 });
      const held = await a.acquire();
      const first = track(b.acquire());
      await until(() => b.queueLength === 1);
      const second = track(c.acquire());
      await until(() => c.queueLength === 1);
      await subscribed(redis, b.channel);
      await subscribed(redis, c.channel);
      const trips = c.stats().roundTrips;
      await held.release();
      await until(() => first.settled);
      expect(first.ok).toBe(true);
      await roundTrip(redis);
      expect(second.settled).toBe(false);
      expect(c.stats().roundTrips).toBe(trips);
      await (first.value as RedisPermit).release();
      await until(() => second.settled);
      expect(second.ok).toBe(true);
      await (second.value as RedisPermit).release();
    });

    it('wakes a waiting call by its poll when it hears nothing (no subscriber)', async () => {
      const clock = new ManualClock();
      const a = bulkhead({
        maxConcurrent: 1,
        maxQueue: 1,
        pollInterval: 1_000,
        subscriber: false,
        random: () => 0.5,
        clock,
      });
      const b = bulkhead({ maxConcurrent: 1 });
      const held = await b.acquire();
      const waiting = track(a.acquire());
      await until(() => a.queueLength === 1);
      held.release();
      await until(() => b.stats().roundTrips === 2);
      expect(waiting.settled).toBe(false);
      clock.advance(999);
      await roundTrip(redis);
      expect(waiting.settled).toBe(false);
      clock.advance(1);
      await until(() => waiting.settled);
      expect(waiting.ok).toBe(true);
      (waiting.value as RedisPermit).release();
    });

    it('wakes a waiting call by its poll when its subscription is lost (the connection killed, never back)', async () => {
      const clock = new ManualClock();
      const sub = await factory.connect(redis().port);
      const subscriber = sub.client;
      const a = bulkhead({
        maxConcurrent: 1,
        maxQueue: 1,
        pollInterval: 1_000,
        random: () => 0.5,
        subscriber,
        clock,
      });
      const b = bulkhead({ maxConcurrent: 1 });
      try {
        const held = await b.acquire();
        const waiting = track(a.acquire());
        await subscribed(redis, a.channel);
        // No reconnection: the test's clients retry after 50 ms, so the subscriber is closed.
        await sub.close();
        await redis().command('CLIENT', 'KILL', 'TYPE', 'pubsub');
        await held.release();
        await roundTrip(redis);
        expect(waiting.settled).toBe(false);
        clock.advance(1_000);
        await until(() => waiting.settled);
        expect(waiting.ok).toBe(true);
        await (waiting.value as RedisPermit).release();
      } finally {
        await sub.close();
      }
    });

    it('polls no later than the end of the earliest lease: a holder that stopped renewing frees its permit then', async () => {
      const clock = new ManualClock();
      const a = bulkhead({
        maxConcurrent: 1,
        maxQueue: 1,
        pollInterval: 3_600_000,
        subscriber: false,
        lease: 600,
        clock,
      });
      // A holder that never renews: a member whose lease ends 300 ms from now on the server.
      await redis().command('ZADD', a.keys.permits, (await serverMs(redis)) + 300, 'dead:1');
      const waiting = track(a.acquire());
      await until(() => a.queueLength === 1);
      // Real time passes on the server; the poll is due at the lease's end on our clock.
      const start = performance.now();
      while (!waiting.settled && performance.now() - start < 5_000) {
        clock.advance(50);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(waiting.ok).toBe(true);
      (waiting.value as RedisPermit).release();
    });

    it('refuses a call still waiting at its queue timeout, and admits the next one', async () => {
      const clock = new ManualClock();
      const a = bulkhead({
        maxConcurrent: 1,
        maxQueue: 5,
        queueTimeout: 1_000,
        pollInterval: 3_600_000,
        clock,
      });
      const held = await a.acquire();
      const waiting = track(a.acquire());
      await until(() => a.queueLength === 1);
      clock.advance(999);
      await roundTrip(redis);
      expect(waiting.settled).toBe(false);
      clock.advance(1);
      await until(() => waiting.settled);
      expect(waiting.error).toMatchObject({ reason: 'queue-timeout' });
      expect(a.stats()).toMatchObject({ queueLength: 0, rejectionsByReason: { queueTimeout: 1 } });
      held.release();
      const next = await a.acquire();
      next.release();
    });

    it('rejects a waiting call with its signal reason when it aborts, and gives a permit freed later to nobody', async () => {
      const clock = new ManualClock();
      const a = bulkhead({ maxConcurrent: 1, maxQueue: 5, clock });
      const held = await a.acquire();
      const controller = new AbortController();
      const waiting = track(a.acquire({ signal: controller.signal }));
      await until(() => a.queueLength === 1);
      const reason = new Error('caller gave up');
      controller.abort(reason);
      await waiting.done;
      expect(waiting.error).toBe(reason);
      expect(a.queueLength).toBe(0);
      held.release();
      await until(() => a.stats().roundTrips >= 3);
      expect(a.inFlight).toBe(0);
      const again = await a.acquire();
      again.release();
    });

    it('refuses a call once maxQueue calls wait, without asking Redis', async () => {
      const a = bulkhead({ maxConcurrent: 1, maxQueue: 1, pollInterval: 3_600_000 });
      const held = await a.acquire();
      const first = track(a.acquire());
      await until(() => a.queueLength === 1);
      const trips = a.stats().roundTrips;
      await expect(a.acquire()).rejects.toMatchObject({ reason: 'full' });
      expect(a.stats().roundTrips).toBe(trips);
      held.release();
      await until(() => first.settled);
      (first.value as RedisPermit).release();
    });

    it('gives the permit back on every path: value, throw, rejection, pipeline success and failure', async () => {
      const a = bulkhead({ maxConcurrent: 1 });
      expect(await a.run(() => 1)).toBe(1);
      await expect(
        a.run(() => {
          throw new Error('sync');
        }),
      ).rejects.toThrow('sync');
      await expect(a.run(async () => Promise.reject(new Error('async')))).rejects.toThrow('async');
      const p = pipeline(a);
      expect(await p.execute(async () => 2)).toBe(2);
      await expect(p.execute(() => Promise.reject(new Error('piped')))).rejects.toThrow('piped');
      expect((await p.tryExecute(() => 3)).ok).toBe(true);
      expect(await a.execute(() => 4)).toBe(4);
      expect(a.inFlight).toBe(0);
      await until(() => a.stats().roundTrips === 14);
      expect(await redis().command('ZCARD', a.keys.permits)).toBe(0);
      expect(a.stats()).toMatchObject({ admitted: 7, permitsLost: 0 });
    });

    it('refuses a pipeline call as full with the bulkhead error (a policy rejection)', async () => {
      const a = bulkhead({ maxConcurrent: 1 });
      const held = await a.acquire();
      const result = await pipeline(a).tryExecute(() => 1);
      expect(result.ok).toBe(false);
      expect((result as { error: unknown }).error).toBeInstanceOf(BulkheadRejectedError);
      held.release();
    });

    it('reloads its scripts after SCRIPT FLUSH without a failed call', async () => {
      const a = bulkhead({ maxConcurrent: 2 });
      const states: StoreStateEvent[] = [];
      a.onStoreStateChange((e) => states.push(e));
      (await a.acquire()).release();
      await redis().command('SCRIPT', 'FLUSH');
      const permit = await a.acquire();
      expect(permit.local).toBe(false);
      permit.release();
      await redis().command('SCRIPT', 'FLUSH');
      await until(() => a.stats().roundTrips === 4);
      expect(states).toEqual([]);
      expect(a.stats().fallbackAdmissions).toBe(0);
    });

    it('reports a permit whose lease ended while held as an event, aborts its signal, and never fails the call', async () => {
      const clock = new ManualClock();
      const a = bulkhead({ maxConcurrent: 2, lease: 3_000, clock });
      const events: PermitLostEvent[] = [];
      a.onPermitLost((e) => events.push(e));
      const permit = await a.acquire();
      const signal = permit.signal;
      // The lease ends on the server (as after a pause longer than it).
      await redis().command(
        'ZADD',
        a.keys.permits,
        'XX',
        1,
        `${a.instanceId}:${permit.fencingToken}:${permit.slot}`,
      );
      clock.advance(1_000);
      await until(() => events.length === 1);
      expect(events[0]).toMatchObject({ fencingToken: permit.fencingToken, reason: 'expired' });
      expect(permit.lost).toBe(true);
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBeInstanceOf(PermitLostError);
      permit.release();
      expect(a.stats()).toMatchObject({ inFlight: 0, permitsLost: 1 });
      expect(unhandled).toEqual([]);
    });

    it('reads a permit as lost from the moment its lease can have ended by the local clock, counted from when the acquire was sent, before any timer ran; a signal first read then starts aborted', async () => {
      const t = pausedClock();
      const clock = t.clock;
      const a = bulkhead({ maxConcurrent: 1, lease: 3_000, clock });
      const events: PermitLostEvent[] = [];
      a.onPermitLost((e) => events.push(e));
      const asked = a.acquire();
      t.paused = 1_000; // the reply comes a second after the acquire was sent
      const permit = await asked;
      t.paused = 2_999;
      expect(permit.lost).toBe(false);
      t.paused = 3_000;
      expect(t.manual.pendingTimers).toBeGreaterThan(0);
      expect(permit.lost).toBe(true);
      expect(permit.signal.aborted).toBe(true);
      expect(permit.signal.reason).toBeInstanceOf(PermitLostError);
      expect(events).toMatchObject([{ fencingToken: permit.fencingToken, reason: 'unrenewed' }]);
      expect(a.stats().permitsLost).toBe(1);
      permit.release();
      expect(a.stats().inFlight).toBe(0);
      expect(unhandled).toEqual([]);
    });

    it('never reads a permit released within its lease as lost, however long after', async () => {
      const t = pausedClock();
      const clock = t.clock;
      const a = bulkhead({ maxConcurrent: 1, lease: 3_000, clock });
      const permit = await a.acquire();
      permit.release();
      t.paused = 10_000;
      expect(permit.lost).toBe(false);
      expect(permit.signal.aborted).toBe(false);
    });

    it('renews held permits every third of the lease, so they outlive it', async () => {
      const clock = new ManualClock();
      const a = bulkhead({ maxConcurrent: 2, lease: 3_000, clock });
      const permit = await a.acquire();
      const member = `${a.instanceId}:${permit.fencingToken}:${permit.slot}`;
      const first = Number(await redis().command('ZSCORE', a.keys.permits, member));
      await new Promise((r) => setTimeout(r, 20));
      clock.advance(1_000);
      await until(() => a.stats().roundTrips === 2);
      await roundTrip(redis);
      const renewed = Number(await redis().command('ZSCORE', a.keys.permits, member));
      expect(renewed).toBeGreaterThan(first);
      expect(a.stats().liveInstances).toBe(1);
      permit.release();
    });

    it('admits by its local share while Redis is down, reports it, and goes back to Redis once a probe succeeds', async () => {
      const clock = new ManualClock();
      const a = bulkhead({ maxConcurrent: 4, instances: 2, probeInterval: 500, clock });
      const states: StoreStateEvent[] = [];
      a.onStoreStateChange((e) => states.push(e));
      (await a.acquire()).release();
      await redis().kill();
      const p1 = await a.acquire();
      const p2 = await a.acquire();
      expect([p1.local, p2.local]).toEqual([true, true]);
      expect(p1.fencingToken).toBeUndefined();
      await expect(a.acquire()).rejects.toMatchObject({ reason: 'full' });
      expect(states.map((s) => s.available)).toEqual([false]);
      expect(a.stats()).toMatchObject({
        storeAvailable: false,
        localShare: 2,
        fallbackAdmissions: 2,
      });
      p1.release();
      p2.release();
      await redis().restart();
      clock.advance(500);
      // The first call after probeInterval goes to Redis; the client reconnects meanwhile.
      let back: RedisPermit | undefined;
      for (let i = 0; i < 200 && (back === undefined || back.local); i++) {
        back?.release();
        clock.advance(500);
        back = await a.acquire();
        if (back.local) await new Promise((r) => setTimeout(r, 25));
      }
      expect(back!.local).toBe(false);
      expect(a.storeAvailable).toBe(true);
      expect(states.map((s) => s.available)).toEqual([false, true]);
      back!.release();
    });

    it('keeps the local shares within maxConcurrent when processes outnumber it: six processes, a limit of 5, the live count known', async () => {
      const six = Array.from({ length: 6 }, () => bulkhead({ maxConcurrent: 5 }));
      for (const b of six) (await b.acquire()).release();
      // Once more, so that each has heard the live count of six.
      for (const b of six) (await b.acquire()).release();
      expect(six.map((b) => b.stats().liveInstances)).toEqual([6, 6, 6, 6, 6, 6]);
      await redis().kill();
      const held: RedisPermit[] = [];
      for (const b of six) {
        try {
          held.push(await b.acquire());
        } catch (error) {
          expect(error).toBeInstanceOf(BulkheadRejectedError);
        }
      }
      expect(held.length).toBeLessThanOrEqual(5);
      expect(six.reduce((sum, b) => sum + b.localShare, 0)).toBeLessThanOrEqual(5);
      for (const p of held) p.release();
    });

    it('refuses locally with a share of 0 when the instances option outnumbers maxConcurrent', async () => {
      const a = bulkhead({ maxConcurrent: 2, instances: 3 });
      (await a.acquire()).release();
      await redis().kill();
      expect(a.localShare).toBe(0);
      await expect(a.acquire()).rejects.toMatchObject({ reason: 'full' });
      expect(a.stats().fallbackAdmissions).toBe(0);
    });

    it('with onStoreFailure "closed" refuses every call while Redis is down, and "open" admits all', async () => {
      const closed = bulkhead({ maxConcurrent: 4, onStoreFailure: 'closed' });
      const open = bulkhead({ maxConcurrent: 1, onStoreFailure: 'open' });
      await redis().kill();
      await expect(closed.acquire()).rejects.toMatchObject({ reason: 'full' });
      const permits = [await open.acquire(), await open.acquire(), await open.acquire()];
      expect(permits.every((p) => p.local)).toBe(true);
      for (const p of permits) p.release();
      expect(open.inFlight).toBe(0);
    });

    it('loses a held permit it could not renew for a whole lease while Redis is down (reason "unrenewed")', async () => {
      const clock = new ManualClock();
      const a = bulkhead({ maxConcurrent: 2, lease: 3_000, clock });
      const events: PermitLostEvent[] = [];
      a.onPermitLost((e) => events.push(e));
      const permit = await a.acquire();
      await redis().kill();
      for (let i = 0; i < 3; i++) {
        clock.advance(1_000);
        await until(() => a.stats().roundTrips === 2 + i);
      }
      expect(events.map((e) => e.reason)).toEqual(['unrenewed']);
      expect(permit.lost).toBe(true);
      permit.release();
      expect(unhandled).toEqual([]);
    });

    it('refuses waiting calls with a UsageError when disposed', async () => {
      const a = bulkhead({ maxConcurrent: 1, maxQueue: 2 });
      const held = await a.acquire();
      const waiting = track(a.acquire());
      await until(() => a.queueLength === 1);
      a.dispose();
      await waiting.done;
      expect((waiting.error as Error).name).toBe('UsageError');
      held.release();
      await expect(a.acquire()).rejects.toThrow(/disposed/);
    });

    it('refuses a call whose acquire was on its way at dispose with a UsageError, and gives its permit back', async () => {
      const a = bulkhead({ maxConcurrent: 1 });
      const asking = track(a.acquire());
      a.dispose();
      await asking.done;
      expect((asking.error as Error).name).toBe('UsageError');
      await until(() => a.stats().roundTrips === 2);
      await until(() => a.inFlight === 0);
    });

    it('admits pipeline calls at once by its local share while Redis is down, and refuses past it', async () => {
      const clock = new ManualClock();
      const a = bulkhead({ maxConcurrent: 2, instances: 2, probeInterval: 60_000, clock });
      (await a.acquire()).release();
      await redis().kill();
      const outage = await a.tryExecute(() => 'first');
      expect(outage).toEqual({ ok: true, value: 'first' });
      const p = pipeline(a);
      let release!: () => void;
      const running = p.execute(() => new Promise<void>((r) => (release = r)));
      const refused = await p.tryExecute(() => 'third');
      expect(refused.ok).toBe(false);
      expect((refused as { error: unknown }).error).toBeInstanceOf(BulkheadRejectedError);
      release();
      await running;
      expect(a.stats()).toMatchObject({ admitted: 3, inFlight: 0, fallbackAdmissions: 2 });
    });
  });
});

/** The server's clock in ms. */
async function serverMs(redis: () => { command(...args: string[]): Promise<unknown> }) {
  const [s, us] = (await redis().command('TIME')) as [string, string];
  return Number(s) * 1_000 + Math.floor(Number(us) / 1_000);
}

/** One command answered by the server: replies sent before it have been read by now. */
async function roundTrip(redis: () => { command(...args: string[]): Promise<unknown> }) {
  await redis().command('PING');
  await new Promise((r) => setTimeout(r, 10));
}

/** Resolves once some connection is subscribed to `channel`. */
async function subscribed(
  redis: () => { command(...args: string[]): Promise<unknown> },
  channel: string,
) {
  for (let i = 0; i < 2_500; i++) {
    const reply = (await redis().command('PUBSUB', 'NUMSUB', channel)) as [string, number];
    if (reply[1] > 0) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`nobody subscribed to ${channel}`);
}
