/**
 * RedisRateLimiter when Redis answers late or hangs (real server, stopped with SIGSTOP): a late
 * reply does not switch the limiter to its fallback, the local fallback starts each key from
 * what Redis last said about it, and while Redis hangs one probe at a time goes to it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/index.js';
import type { StoreStateEvent } from '../../src/redis/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { macrotask, sleep } from '../support/async.js';
import { clients, limitersForEachTest } from '../support/redis-clients.js';
import { describeRedis, type RespReply } from '../support/redis-server.js';

/** Calls of `EVALSHA` the server has run, by `INFO commandstats`. */
function evalshaCalls(info: RespReply): number {
  const match = /cmdstat_evalsha:calls=(\d+)/.exec(String(info));
  return match === null ? 0 : Number(match[1]);
}

describeRedis('RedisRateLimiter when Redis is late or hung', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const { limiter } = limitersForEachTest(redis, factory, 'fallback');
    // Registered last, so it runs first: the limiters and the client close on a running server.
    afterEach(() => redis().resume());

    it('one late reply (the server stopped for 30 ms) switches nothing: with the defaults a key at its limit gets no more than the rate', async () => {
      const l = limiter({ limit: 100 });
      const events: StoreStateEvent[] = [];
      l.onStoreStateChange((e) => events.push(e));
      let stop = false;
      let admitted = 0;
      const started = performance.now();
      // 10 callers flat out: the burst of 100 goes at once, then one call per 10 ms.
      const callers = Array.from({ length: 10 }, async () => {
        while (!stop) {
          if ((await l.tryAcquire('k')) === 0) admitted++;
          await macrotask();
        }
      });
      await sleep(1_000);
      redis().pause();
      await sleep(30);
      redis().resume();
      await sleep(1_000);
      stop = true;
      await Promise.all(callers);
      const elapsed = performance.now() - started;
      const { fallbackDecisions } = l.stats();

      expect(events).toEqual([]);
      // Only decisions on their way while the server was stopped could miss their deadline
      // (none did unless this process stalled for the 200 ms timeout), at most one per caller.
      expect(fallbackDecisions).toBeLessThanOrEqual(10);
      // The GCRA bound over the run (burst + rate x elapsed + 1), and at most one permit per
      // decision the fallback made.
      expect(admitted).toBeLessThanOrEqual(100 + (100 * elapsed) / 1_000 + 1 + fallbackDecisions);
    });

    it('the local fallback starts a key where Redis left it: a key at its limit stays there, a key Redis never saw gets the local burst', async () => {
      const clock = new ManualClock();
      // One permit per 10 s: the key's state on Redis barely moves while the test runs.
      const l = limiter({ limit: 10, period: 100_000, clock, probeInterval: 60_000 });
      for (let i = 0; i < 10; i++) expect(await l.tryAcquire('k')).toBe(0);
      redis().pause();

      // One decision misses its 200 ms deadline: it is made locally, where the key is at its
      // limit too, and the limiter does not switch.
      const late = l.tryAcquire('k');
      clock.advance(200);
      const wait = await late;
      expect(wait).toBeGreaterThan(9_000);
      expect(wait).toBeLessThanOrEqual(9_800);
      expect(l.storeAvailable).toBe(true);
      expect(l.stats()).toMatchObject({ roundTrips: 11, fallbackDecisions: 1 });

      // The next decision goes to Redis again; sent 200 ms after the first failed one, its
      // failure switches the limiter.
      const next = l.tryAcquire('k');
      clock.advance(200);
      expect(await next).toBeGreaterThan(0);
      expect(l.storeAvailable).toBe(false);

      // Switched: decided locally at once, nothing sent.
      expect(await l.tryAcquire('k')).toBeGreaterThan(0);
      for (let i = 0; i < 10; i++) expect(await l.tryAcquire('fresh')).toBe(0);
      expect(await l.tryAcquire('fresh')).toBeGreaterThan(0);
      expect(l.stats().roundTrips).toBe(12);
      // The key's next permit comes when Redis's state said (`wait` after 200 ms), not before.
      clock.advance(wait - 200 - 1);
      expect(await l.tryAcquire('k')).toBeGreaterThan(0);
      clock.advance(2);
      expect(await l.tryAcquire('k')).toBe(0);
      expect(await l.tryAcquire('k')).toBeGreaterThan(0);
    });

    it('the local state holds at most maxKeys keys: past it the key seen first is forgotten and starts idle', async () => {
      const clock = new ManualClock();
      const l = limiter({ limit: 1, period: 100_000, clock, probeInterval: 60_000, maxKeys: 3 });
      for (const key of ['a', 'b', 'c']) expect(await l.tryAcquire(key)).toBe(0);
      redis().pause();
      // Two decisions on a fourth key, sent 200 ms apart, fail: switched. The fourth key's
      // local state pushes out the first.
      for (let i = 0; i < 2; i++) {
        const failed = l.tryAcquire('x');
        clock.advance(200);
        await failed;
      }
      expect(l.storeAvailable).toBe(false);
      expect(await l.tryAcquire('b')).toBeGreaterThan(0);
      expect(await l.tryAcquire('c')).toBeGreaterThan(0);
      expect(await l.tryAcquire('a')).toBe(0);
    });

    it('more permits than the local share of the burst are refused locally until the next probe, never an error', async () => {
      const clock = new ManualClock();
      const l = limiter({ limit: 10, burst: 10, localShare: 0.25, clock, probeInterval: 500 });
      expect(await l.tryAcquire('k')).toBe(0);
      redis().pause();
      const failed = l.tryAcquire('k', 5);
      clock.advance(200);
      expect(await failed).toBe(500);
      const next = l.tryAcquire('k', 5);
      clock.advance(200);
      expect(await next).toBe(500);
      expect(l.storeAvailable).toBe(false);
      expect(await l.tryAcquire('k', 5)).toBe(500);
      // The local burst is 2 (a quarter of 10).
      expect(await l.tryAcquire('other', 2)).toBe(0);
    });

    it('while Redis hangs, one probe per probeInterval goes to it and none while one is on its way (counted by the server)', async () => {
      const clock = new ManualClock();
      const l = limiter({ limit: 1_000, clock });
      await l.store.load();
      expect(await l.tryAcquire('k')).toBe(0);
      const before = evalshaCalls(await redis().command('INFO', 'commandstats'));
      redis().pause();

      // A call every 10 ms for 3 s (timeout 200, probeInterval 500: the defaults).
      let switchedAt = -1;
      let roundTripsAtSwitch = 0;
      let mostPending = 0;
      const calls: Promise<number>[] = [];
      for (let t = 0; t < 3_000; t += 10) {
        calls.push(l.tryAcquire(`k${t % 7}`));
        // Once the decisions sent before the switch have timed out: only probes are pending.
        if (switchedAt >= 0 && t >= switchedAt + 200) {
          mostPending = Math.max(mostPending, l.store.pending);
        }
        clock.advance(10);
        await flushMicrotasks();
        if (switchedAt < 0 && !l.storeAvailable) {
          switchedAt = t + 10;
          roundTripsAtSwitch = l.stats().roundTrips;
        }
      }
      await Promise.all(calls);
      const probes = l.stats().roundTrips - roundTripsAtSwitch;

      // Switched: probes at 700, 1200, 1700, 2200 and 2700 ms, each failing 200 ms later, and
      // nothing else.
      expect(probes).toBe(5);
      expect(mostPending).toBe(1);
      // The first failure (at 200 ms) did not switch; the failure of the decision sent at
      // 200 ms did, at 400 ms. Until then every decision went to Redis.
      expect(switchedAt).toBe(400);
      expect(roundTripsAtSwitch).toBe(1 + 40);
      expect(l.store.pending).toBe(0);

      // The server, once resumed, runs exactly the decisions the limiter sent.
      redis().resume();
      const sent = l.stats().roundTrips - 1;
      const deadline = performance.now() + 5_000;
      let ran = 0;
      while (performance.now() < deadline) {
        ran = evalshaCalls(await redis().command('INFO', 'commandstats')) - before;
        if (ran >= sent) break;
        await sleep(20);
      }
      expect(sent).toBe(40 + 5);
      expect(ran).toBe(sent);
    });

    it('rejects a key longer than 1,024 characters before sending anything (an 8 MiB key cannot stall the limiter)', async () => {
      const l = limiter({ limit: 10 });
      const huge = 'x'.repeat(8 * 1024 * 1024);
      await expect(l.tryAcquire(huge)).rejects.toBeInstanceOf(OptionsError);
      await expect(l.tryAcquire(huge)).rejects.toMatchObject({ option: 'key' });
      await expect(l.tryAcquire('y'.repeat(1_025))).rejects.toThrow(
        /a string of at most 1024 characters/,
      );
      await expect(l.acquire('y'.repeat(1_025))).rejects.toMatchObject({ option: 'key' });
      expect(l.stats()).toMatchObject({ roundTrips: 0, fallbackDecisions: 0 });
      expect(l.store.pending).toBe(0);
      expect(await l.tryAcquire('z'.repeat(1_024))).toBe(0);
      expect(l.storeAvailable).toBe(true);
    });
  });
});
