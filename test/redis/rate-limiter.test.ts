/**
 * RedisRateLimiter on a real Redis server, with both clients: the same decisions as the
 * in-memory limiter, the negative cache and leases saving round trips without admitting more
 * than the rate, and the fallback while Redis is away.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyedRateLimiter, RateLimitedError } from '../../src/index.js';
import {
  RedisGcraStore,
  RedisRateLimiter,
  type StoreFailureMode,
  type StoreStateEvent,
} from '../../src/redis/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { sleep } from '../support/async.js';
import { clients, limitersForEachTest } from '../support/redis-clients.js';
import { describeRedis } from '../support/redis-server.js';

describeRedis('RedisRateLimiter', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const { client, limiter } = limitersForEachTest(redis, factory, 'rl');
    let traces = 0;

    it('property: the in-memory keyed limiter and the Redis script decide identically on a trace', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 20 }),
          // At least 200 ms per permit: a key then lives in Redis (real time) longer than a
          // trace takes to run, as the in-memory limiter keeps it.
          fc.integer({ min: 200, max: 2_000 }),
          fc.integer({ min: 1, max: 10 }),
          fc.array(
            fc.record({
              key: fc.constantFrom('a', 'b'),
              permits: fc.integer({ min: 1, max: 10 }),
              advanceUs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000_000 })),
            }),
            { minLength: 5, maxLength: 60 },
          ),
          async (limit, perPermit, burst, trace) => {
            const period = limit * perPermit;
            const clock = new ManualClock(1_700_000_000_000);
            const memory = new KeyedRateLimiter({ limit, period, burst, clock });
            const store = new RedisGcraStore({
              client: client(),
              name: `trace-${factory.kind}-${++traces}`,
              onWarning: () => {},
            });
            const intervalUs = Math.round((period * 1_000) / limit);
            let nowUs = 1_700_000_000_000_000;
            try {
              for (const step of trace) {
                nowUs += step.advanceUs;
                clock.advance(nowUs / 1_000 - clock.now());
                const permits = Math.min(step.permits, burst);
                const wait = memory.tryAcquire(step.key, permits);
                const decision = await store.decide(step.key, permits, intervalUs, burst, nowUs);
                expect(wait === 0).toBe(decision.allowed);
                expect(Math.round(wait * 1_000)).toBe(decision.retryAfterUs);
              }
            } finally {
              store.dispose();
            }
          },
        ),
        { numRuns: 30 },
      );
    });

    it('admits the burst from idle, then refuses with the wait until the next permit', async () => {
      const l = limiter({ limit: 10, period: 1_000, burst: 3 });
      const waits: number[] = [];
      const t0 = performance.now();
      for (let i = 0; i < 4; i++) waits.push(await l.tryAcquire('user'));
      const elapsed = performance.now() - t0;
      expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
      // The next permit is free 100 ms after the first was taken, however long the calls took.
      expect(waits[3]).toBeLessThanOrEqual(100);
      expect(waits[3]).toBeGreaterThanOrEqual(100 - elapsed - 1);
      expect(l.stats()).toMatchObject({ admitted: 3, rejected: 1, roundTrips: 4 });
    });

    it("a refusal a caller keeps never changes when another key's refusal waits for another time", async () => {
      const l = limiter({ limit: 1, period: 60_000, burst: 1 });
      await l.acquire('a');
      const a = (await l
        .acquire('a', 1, { maxWait: 0 })
        .catch((e: unknown) => e)) as RateLimitedError;
      const freeAt = a.freeAt;
      await sleep(2);
      await l.acquire('b');
      const b = (await l
        .acquire('b', 1, { maxWait: 0 })
        .catch((e: unknown) => e)) as RateLimitedError;
      expect(b).toBeInstanceOf(RateLimitedError);
      expect(b).not.toBe(a);
      expect(a.freeAt).toBe(freeAt);
      expect(b.freeAt).toBeGreaterThan(freeAt);
    });

    it('the negative cache refuses locally until the refusal’s time, then asks Redis again', async () => {
      const l = limiter({ limit: 1, period: 300, burst: 1 });
      expect(await l.tryAcquire('k')).toBe(0);
      const first = await l.tryAcquire('k');
      expect(first).toBeGreaterThan(0);
      for (let i = 0; i < 50; i++) expect(await l.tryAcquire('k')).toBeGreaterThan(0);
      expect(l.stats()).toMatchObject({ roundTrips: 2, cachedRefusals: 50 });
      await sleep(first + 5);
      expect(await l.tryAcquire('k')).toBe(0);
      expect(l.stats().roundTrips).toBe(3);
    });

    it('when a cached refusal runs out, one caller asks Redis and the others wait for its answer', async () => {
      const l = limiter({ limit: 1, period: 200, burst: 1 });
      expect(await l.tryAcquire('k')).toBe(0);
      const wait = await l.tryAcquire('k');
      expect(wait).toBeGreaterThan(0);
      await sleep(wait + 5);
      const before = l.stats().roundTrips;
      const waits = await Promise.all(Array.from({ length: 20 }, () => l.tryAcquire('k')));
      expect(l.stats().roundTrips - before).toBe(1);
      expect(waits.filter((w) => w === 0)).toHaveLength(1);
      // Once it answered, the cache is gone for an admitted key: the next call asks Redis.
      expect(await l.tryAcquire('k')).toBeGreaterThan(0);
      expect(l.stats().roundTrips - before).toBe(2);
    });

    it('a cached refusal that runs out while Redis is away hands the key to the fallback, not to a wait', async () => {
      const l = limiter({
        limit: 1,
        period: 200,
        burst: 1,
        onStoreFailure: 'open',
        timeout: 30,
        probeInterval: 60_000,
      });
      expect(await l.tryAcquire('k')).toBe(0);
      const wait = await l.tryAcquire('k');
      expect(wait).toBeGreaterThan(0);
      await redis().kill();
      // Another key finds Redis away (its decisions fail for the 30 ms timeout, so the limiter
      // switches); no decision goes to it for the next minute.
      const killed = performance.now();
      while (l.storeAvailable && performance.now() - killed < 2_000) {
        expect(await l.tryAcquire('other')).toBe(0);
        await sleep(5);
      }
      expect(l.storeAvailable).toBe(false);
      await sleep(wait + 5);
      const waits: number[] = [];
      for (let i = 0; i < 5; i++) waits.push(await l.tryAcquire('k'));
      expect(waits).toEqual([0, 0, 0, 0, 0]);
    });

    it('the negative cache never refuses what Redis would admit: fewer permits may pass earlier', async () => {
      const l = limiter({ limit: 10, period: 1_000, burst: 5 });
      expect(await l.tryAcquire('k', 4)).toBe(0);
      // 1 permit left: 3 are refused, 1 is admitted (the cache must not refuse it).
      expect(await l.tryAcquire('k', 3)).toBeGreaterThan(0);
      expect(await l.tryAcquire('k', 1)).toBe(0);
    });

    it('lease mode: a hot key costs fewer round trips, and admits no more than the rate', async () => {
      const limit = 2_000;
      const burst = 200;
      const l = limiter({ limit, period: 1_000, burst, lease: 20, negativeCache: false });
      const started = performance.now();
      let admitted = 0;
      let calls = 0;
      // Bursts of 50 calls from 4 callers, every 20 ms, for 600 ms: about the rate.
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (performance.now() - started < 600) {
            for (let i = 0; i < 12; i++) {
              calls++;
              if ((await l.tryAcquire('hot')) === 0) admitted++;
            }
            await sleep(20);
          }
        }),
      );
      const elapsed = performance.now() - started;
      const stats = l.stats();
      expect(stats.leasedAdmissions).toBeGreaterThan(0);
      expect(stats.roundTrips).toBeLessThan(calls);
      expect(admitted).toBeLessThanOrEqual(burst + (limit * elapsed) / 1_000 + 1);
      // Offered about the rate, nearly every call passed: leases wasted few permits.
      expect(admitted).toBeGreaterThan(calls * 0.9);
    });

    it.each<[StoreFailureMode, string]>([
      ['local', 'a local limiter with its share of the rate decides'],
      ['open', 'every call is admitted'],
      ['closed', 'every call is refused'],
    ])(
      'onStoreFailure %s: once decisions have failed for the timeout, %s, without errors, and Redis takes over again once it answers',
      async (mode) => {
        const events: StoreStateEvent[] = [];
        const l = limiter({
          limit: 100,
          period: 1_000,
          burst: 10,
          onStoreFailure: mode,
          localShare: 0.5,
          timeout: 30,
          probeInterval: 50,
        });
        l.onStoreStateChange((e) => events.push(e));
        expect(await l.tryAcquire('k')).toBe(0);
        await redis().kill();
        // Each failed decision falls back on its own; the limiter switches once decisions sent
        // 30 ms (the timeout) apart have failed.
        const killed = performance.now();
        while (l.storeAvailable && performance.now() - killed < 2_000) {
          await l.tryAcquire('other');
          await sleep(5);
        }
        const waits: number[] = [];
        const before = l.stats();
        const t0 = performance.now();
        for (let i = 0; i < 12; i++) waits.push(await l.tryAcquire('k'));
        const elapsed = performance.now() - t0;
        const after = l.stats();
        expect(l.storeAvailable).toBe(false);
        expect(events).toHaveLength(1);
        expect(events[0]!.available).toBe(false);
        // Switched: every decision is the fallback's, and none waits for Redis but the probe
        // sent every 50 ms (counted, not timed: a busy machine stalls any call).
        expect(after.fallbackDecisions - before.fallbackDecisions).toBe(12);
        expect(after.roundTrips - before.roundTrips).toBeLessThanOrEqual(1 + elapsed / 50);
        const admitted = waits.filter((w) => w === 0).length;
        if (mode === 'open') expect(admitted).toBe(12);
        if (mode === 'closed') expect(admitted).toBe(0);
        // Half the burst of 10, locally: the key's one permit taken on Redis was back before.
        if (mode === 'local') expect(admitted).toBe(5);
        await redis().restart();
        const back = performance.now();
        while (!l.storeAvailable && performance.now() - back < 2_000) {
          await l.tryAcquire('other');
          await sleep(10);
        }
        expect(l.storeAvailable).toBe(true);
        expect(events.map((e) => e.available)).toEqual([false, true]);
        expect(l.stats().fallbackDecisions).toBeGreaterThan(0);
      },
    );

    it('acquire waits for the time its refusal named, then is admitted; past maxWait it rejects', async () => {
      const l = limiter({ limit: 10, period: 1_000, burst: 1 });
      const t0 = performance.now();
      expect(await l.tryAcquire('k')).toBe(0);
      await l.acquire('k', 1, { maxWait: 500 });
      // Not before the next permit, 100 ms after the first was taken (1 ms for rounding).
      expect(performance.now() - t0).toBeGreaterThanOrEqual(99);
      const refused = await l.acquire('k', 1, { maxWait: 10 }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'ERR_BREAKWATER_RATE_LIMITED' });
    });
  });
});

describe('RedisRateLimiter per-decision cost', () => {
  const REPLY = [1, 0, 9, 1, 0];

  /** An adapter whose replies the test hands out, one at a time. */
  function heldReplies() {
    const waiting: (() => void)[] = [];
    const evalsha = () =>
      new Promise<unknown>((resolve) => {
        waiting.push(() => resolve(REPLY));
      });
    return {
      adapter: { evalsha, eval: evalsha, scriptLoad: () => Promise.resolve('x') },
      reply: () => waiting.shift()!(),
    };
  }

  /** Microtask turns, after `release()`, until `settled()` reads true. */
  async function turnsUntil(release: () => void, settled: () => boolean): Promise<number> {
    release();
    let turns = 0;
    while (!settled() && turns < 20) {
      await undefined;
      turns++;
    }
    return turns;
  }

  it("a decision settles as soon as a promise chained once on the client's reply would", async () => {
    const { adapter, reply } = heldReplies();
    const l = new RedisRateLimiter({ client: adapter, name: 'hops', limit: 10, timeout: 1_000 });
    let outcome: number | undefined;
    void l.tryAcquire('k').then((wait) => {
      outcome = wait;
    });
    const limiterTurns = await turnsUntil(reply, () => outcome !== undefined);
    expect(outcome).toBe(0);

    let chained = false;
    void adapter
      .evalsha()
      .then((r) => r)
      .then(() => {
        chained = true;
      });
    const onceChained = await turnsUntil(reply, () => chained);
    expect(limiterTurns).toBe(onceChained);
    l.dispose();
  });

  it('decisions one after another share one deadline timer: none is armed per decision', async () => {
    const clock = new ManualClock();
    let timers = 0;
    const setTimer = clock.setTimer.bind(clock);
    clock.setTimer = (callback, ms) => {
      timers++;
      return setTimer(callback, ms);
    };
    const { adapter, reply } = heldReplies();
    const l = new RedisRateLimiter({ client: adapter, name: 'timers', limit: 1_000, clock });
    for (let i = 0; i < 100; i++) {
      const decision = l.tryAcquire(`k${i}`);
      reply();
      expect(await decision).toBe(0);
      clock.advance(1);
    }
    expect(timers).toBe(1);
    expect(l.store.pending).toBe(0);
    l.dispose();
  });
});
