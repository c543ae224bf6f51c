/**
 * RedisRateLimiter.decide on a real Redis server, with both clients, the script run at a
 * ManualClock's time: the in-memory limiters' decisions exactly, the state a lease leaves to
 * other processes, and the fallback's numbers (degraded) while Redis does not answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyedRateLimiter, type RateLimitDecision } from '../../src/index.js';
import type { StoreFailureMode } from '../../src/redis/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { sleep } from '../support/async.js';
import { clients, limitersForEachTest } from '../support/redis-clients.js';
import { describeRedis } from '../support/redis-server.js';
import { onClockTime } from '../support/redis-time.js';

/** One permit a minute: keys live in Redis (real time) far longer than a test takes. */
const MINUTE = 60_000;

describeRedis('RedisRateLimiter.decide', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    const { limiter } = limitersForEachTest(redis, factory, 'decide');
    const onManualTime = (options: Parameters<typeof limiter>[0] & { clock: ManualClock }) =>
      limiter(options, (client) => onClockTime(client, options.clock));

    it('counts remaining down to 0, then refuses with the exact wait of the GCRA', async () => {
      const clock = new ManualClock(1_700_000_000_000);
      const l = onManualTime({ limit: 3, period: 3 * MINUTE, clock, negativeCache: false });
      const seen: RateLimitDecision[] = [];
      for (let i = 0; i < 3; i++) seen.push(await l.decide('user'));
      expect(seen.map((d) => [d.allowed, d.remaining, d.resetMs])).toEqual([
        [true, 2, MINUTE],
        [true, 1, 2 * MINUTE],
        [true, 0, 3 * MINUTE],
      ]);
      clock.advance(20_000);
      expect(await l.decide('user')).toEqual({
        allowed: false,
        limit: 3,
        windowMs: 3 * MINUTE,
        remaining: 0,
        retryAfterMs: 40_000,
        resetMs: 3 * MINUTE - 20_000,
        degraded: false,
      });
      expect(await l.tryAcquire('user')).toBe(40_000);
      expect(l.stats()).toMatchObject({ admitted: 3, rejected: 2 });
    });

    it('a burst of N is admitted, then one is refused', async () => {
      const clock = new ManualClock(1_700_000_000_000);
      const l = onManualTime({ limit: 5, period: 5 * MINUTE, clock });
      for (let i = 0; i < 5; i++) expect((await l.decide('k')).allowed).toBe(true);
      expect(await l.decide('k')).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: MINUTE,
      });
    });

    it('resetMs falls as time passes, from Redis and from the negative cache alike', async () => {
      const clock = new ManualClock(1_700_000_000_000);
      const cached = onManualTime({ limit: 2, period: 2 * MINUTE, clock });
      const fresh = onManualTime({ limit: 2, period: 2 * MINUTE, clock, negativeCache: false });
      const resets: number[][] = [];
      for (const l of [cached, fresh]) await l.decide('k', 2);
      for (let i = 0; i < 3; i++) {
        clock.advance(10_000);
        const both = [await cached.decide('k'), await fresh.decide('k')];
        for (const d of both) expect(d).toMatchObject({ allowed: false, remaining: 0 });
        resets.push(both.map((d) => d.resetMs));
      }
      expect(resets).toEqual([
        [110_000, 110_000],
        [100_000, 100_000],
        [90_000, 90_000],
      ]);
      expect(cached.stats().cachedRefusals).toBe(2);
    });

    it('a refusal of the negative cache while another call asks Redis reports fewer remaining than it refused', async () => {
      const clock = new ManualClock(1_700_000_000_000);
      const l = onManualTime({ limit: 1, period: MINUTE, clock });
      await l.decide('k');
      expect(await l.decide('k')).toMatchObject({ allowed: false, retryAfterMs: MINUTE });
      clock.advance(MINUTE);
      // The cached refusal ran out: the first call asks Redis, the second is refused meanwhile.
      const [asking, waiting] = await Promise.all([l.decide('k'), l.decide('k')]);
      expect(asking).toMatchObject({ allowed: true, remaining: 0, degraded: false });
      expect(waiting).toMatchObject({ allowed: false, remaining: 0, degraded: false });
      expect(waiting.retryAfterMs).toBeGreaterThan(0);
      expect(l.stats()).toMatchObject({ cachedRefusals: 1, roundTrips: 3 });
    });

    it('property: the in-memory keyed limiter and the Redis limiter agree decision by decision', async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 10 }),
          fc.integer({ min: 1, max: 8 }),
          fc.array(
            fc.record({
              key: fc.constantFrom('a', 'b'),
              permits: fc.integer({ min: 1, max: 8 }),
              advance: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 * MINUTE })),
            }),
            { minLength: 5, maxLength: 40 },
          ),
          async (limit, burst, trace) => {
            const clock = new ManualClock(1_700_000_000_000);
            const options = { limit, period: limit * MINUTE, burst, clock };
            const memory = new KeyedRateLimiter(options);
            const shared = onManualTime({ ...options, negativeCache: false });
            // Each run its own keys: the previous run's are still in Redis.
            const prefix = `${++run}:`;
            for (const step of trace) {
              clock.advance(step.advance);
              const permits = Math.min(step.permits, burst);
              const expected = memory.decide(step.key, permits);
              expect(await shared.decide(prefix + step.key, permits)).toEqual(expected);
            }
          },
        ),
        { seed: 29, numRuns: 25 },
      );
    });

    it("leases: remaining is exactly what a second process on the key can take, never the lease's permits", async () => {
      const clock = new ManualClock(1_700_000_000_000);
      const burst = 20;
      const options = { limit: burst, period: burst * MINUTE, clock, negativeCache: false };
      const leasing = onManualTime({ ...options, lease: 5 });
      const other = onManualTime({ ...options, name: leasing.name });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 25 }),
          async (gaps) => {
            let last: RateLimitDecision | undefined;
            for (const gap of gaps) {
              clock.advance(gap);
              last = await leasing.decide('hot');
            }
            const { remaining } = last!;
            // Everything the leasing process reported is there for the other one, no more.
            if (remaining > 0) expect((await other.decide('hot', remaining)).allowed).toBe(true);
            expect((await other.decide('hot')).allowed).toBe(false);
            // Back to idle, and the leases run out, before the next round.
            clock.advance(options.period + MINUTE);
          },
        ),
        { seed: 29, numRuns: 30 },
      );
      expect(leasing.stats().leasedAdmissions).toBeGreaterThan(0);
    });

    it('decides degraded while Redis is down, and from Redis again once it answers', async () => {
      const l = limiter({ limit: 10, period: 10 * MINUTE, probeInterval: 20, timeout: 5_000 });
      expect(await l.decide('k')).toMatchObject({ degraded: false, remaining: 9 });
      await redis().kill();
      expect(await l.decide('k')).toMatchObject({ allowed: true, degraded: true });
      await redis().restart();
      // Bounded by a stalled machine's worst, not by its speed: the loop ends at the first answer.
      const until = performance.now() + 10_000;
      let d = await l.decide('k');
      while (d.degraded && performance.now() < until) {
        await sleep(10);
        d = await l.decide('k');
      }
      // The restarted server is empty: the key starts again from idle.
      expect(d).toMatchObject({ allowed: true, degraded: false, remaining: 9 });
      expect(l.storeAvailable).toBe(true);
    });

    describe.each<[StoreFailureMode, Partial<RateLimitDecision>]>([
      // Half the rate: a permit per 2 min, a burst of 5, from the 1 minute Redis left taken.
      [
        'local',
        { allowed: true, limit: 5, windowMs: 10 * MINUTE, remaining: 3, resetMs: 3 * MINUTE },
      ],
      ['open', { allowed: true, limit: 10, remaining: 10, retryAfterMs: 0, resetMs: 0 }],
      [
        'closed',
        { allowed: false, limit: 10, remaining: 0, retryAfterMs: 500, resetMs: 10 * MINUTE },
      ],
    ])('Redis away, onStoreFailure: %s', (mode, expected) => {
      it('decides with degraded: true and the numbers of the fallback', async () => {
        const clock = new ManualClock(1_700_000_000_000);
        const connected = await factory.connect(redis().port);
        try {
          const l = limiter(
            { limit: 10, period: 10 * MINUTE, clock, onStoreFailure: mode, localShare: 0.5 },
            () => onClockTime(connected.client, clock),
          );
          expect(await l.decide('k')).toMatchObject({ allowed: true, degraded: false });
          await connected.close();
          const first = await l.decide('k');
          expect(first).toMatchObject({ ...expected, degraded: true });
          clock.advance(l.store.timeout);
          expect(await l.decide('k')).toMatchObject({ degraded: true });
          expect(l.storeAvailable).toBe(false);
          // Switched: decided at once without Redis, then by the failed probe.
          expect(await l.decide('k')).toMatchObject({ degraded: true });
          clock.advance(500);
          expect(await l.decide('k')).toMatchObject({ degraded: true });
          expect(l.stats()).toMatchObject({ fallbackDecisions: 4, roundTrips: 4 });
        } finally {
          await connected.close().catch(() => {});
        }
      });
    });
  });
});
