/**
 * RedisGcraStore against a real redis-server, with each supported client: decisions equal the
 * GCRA formula, keys expire, one EVALSHA per decision, scripts reloaded after SCRIPT FLUSH,
 * odd keys passed safely.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type GcraDecision,
  RedisGcraStore,
  type RedisGcraStoreOptions,
} from '../../src/redis/index.js';
import { type ConnectedClient, clients } from '../support/redis-clients.js';
import { describeRedis, type RespReply } from '../support/redis-server.js';
import { ReferenceGcra } from './gcra-reference.js';

/** Parses `INFO commandstats` into { command: { calls, failed } }. */
function commandStats(info: RespReply): Record<string, { calls: number; failed: number }> {
  const stats: Record<string, { calls: number; failed: number }> = {};
  for (const line of String(info).split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),.*failed_calls=(\d+)/.exec(line);
    if (m) stats[m[1]!] = { calls: Number(m[2]), failed: Number(m[3]) };
  }
  return stats;
}

/** All keys matching `pattern`, by SCAN. */
async function scanKeys(
  command: (...args: (string | number)[]) => Promise<RespReply>,
  pattern: string,
): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const reply = (await command('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)) as [
      string,
      string[],
    ];
    cursor = reply[0];
    keys.push(...reply[1]);
  } while (cursor !== '0');
  return keys;
}

/** The hash tag of a key by Redis Cluster's rule (first `{`, then the first `}` after it). */
function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return undefined;
  return key.slice(open + 1, close);
}

async function inBatches<T>(count: number, concurrency: number, task: (i: number) => Promise<T>) {
  const results: T[] = [];
  for (let start = 0; start < count; start += concurrency) {
    const batch = [];
    for (let i = start; i < Math.min(count, start + concurrency); i++) batch.push(task(i));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

const T0 = 1_700_000_000_000_000;

describeRedis('RedisGcraStore', (redis) => {
  describe.each(clients)('with $kind', (factory) => {
    let connected: ConnectedClient;
    let run = 0;
    /** A store whose keys no other test uses. */
    const store = (options: Partial<RedisGcraStoreOptions> = {}) =>
      new RedisGcraStore({
        client: connected.client,
        name: `${factory.kind}-${++run}`,
        timeout: 2_000,
        onWarning: () => {},
        ...options,
      });

    beforeAll(async () => {
      connected = await factory.connect(redis().port);
    });
    afterAll(async () => {
      await connected?.close();
    });
    beforeEach(async () => {
      await redis().command('SCRIPT', 'FLUSH');
    });

    it('makes the decisions of the GCRA formula, identical on a randomized trace (nowUs from the test)', async () => {
      let compared = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            // At least 1 s: every key then lives for at least 1 s of real time, longer than a
            // run takes, so no key expires before the trace's own clock passes its TAT.
            intervalUs: fc.integer({ min: 1_000_000, max: 10_000_000_000 }),
            burst: fc.integer({ min: 1, max: 20 }),
            start: fc.integer({ min: 0, max: 2_000_000_000_000_000 }),
            steps: fc.array(
              fc.record({
                key: fc.constantFrom('a', 'b', 'c'),
                permits: fc.integer({ min: 1, max: 24 }),
                // Per mille of the interval, then odd microseconds.
                advance: fc.oneof(
                  fc.constant(0),
                  fc.integer({ min: 0, max: 3_000 }),
                  fc.integer({ min: 0, max: 30_000 }),
                ),
                jitterUs: fc.integer({ min: 0, max: 999 }),
                // Extra permits to lease when free (undefined: no lease).
                leaseExtra: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
              }),
              { minLength: 10, maxLength: 80, size: 'max' },
            ),
          }),
          async ({ intervalUs, burst, start, steps }) => {
            const s = store();
            const reference = new ReferenceGcra();
            let now = start;
            for (const step of steps) {
              if (step.advance > 0) {
                now += Math.floor((intervalUs * step.advance) / 1000) + step.jitterUs;
              }
              const lease =
                step.leaseExtra === undefined ? undefined : step.permits + step.leaseExtra;
              const expected = reference.decide(
                step.key,
                step.permits,
                intervalUs,
                burst,
                now,
                lease,
              );
              const actual = await s.decide(step.key, step.permits, intervalUs, burst, now, lease);
              expect(actual).toEqual(expected);
              compared++;
              if (!actual.allowed) refused++;
            }
            for (const [key, tat] of reference.tats) {
              expect(await redis().command('GET', s.redisKey(key))).toBe(String(tat));
            }
          },
        ),
        { numRuns: 50 },
      );
      // The trace exercised both outcomes.
      expect(compared).toBeGreaterThanOrEqual(500);
      expect(refused).toBeGreaterThan(50);
      expect(compared - refused).toBeGreaterThan(50);
    });

    it('admits `burst` calls at once from idle and refuses the next with the exact retryAfterUs', async () => {
      const s = store();
      const intervalUs = 100_000;
      const results: GcraDecision[] = [];
      for (let i = 0; i < 6; i++) results.push(await s.decide('k', 1, intervalUs, 5, T0));
      expect(results).toEqual([
        { allowed: true, retryAfterUs: 0, remaining: 4, granted: 1, aheadUs: 0 },
        { allowed: true, retryAfterUs: 0, remaining: 3, granted: 1, aheadUs: intervalUs },
        { allowed: true, retryAfterUs: 0, remaining: 2, granted: 1, aheadUs: 2 * intervalUs },
        { allowed: true, retryAfterUs: 0, remaining: 1, granted: 1, aheadUs: 3 * intervalUs },
        { allowed: true, retryAfterUs: 0, remaining: 0, granted: 1, aheadUs: 4 * intervalUs },
        {
          allowed: false,
          retryAfterUs: intervalUs,
          remaining: 0,
          granted: 0,
          aheadUs: 5 * intervalUs,
        },
      ]);
      // 1 us before the next emission interval: still refused, by 1 us.
      expect(await s.decide('k', 1, intervalUs, 5, T0 + intervalUs - 1)).toEqual({
        allowed: false,
        retryAfterUs: 1,
        remaining: 0,
        granted: 0,
        aheadUs: 4 * intervalUs + 1,
      });
      expect(await s.decide('k', 1, intervalUs, 5, T0 + intervalUs)).toEqual({
        allowed: true,
        retryAfterUs: 0,
        remaining: 0,
        granted: 1,
        aheadUs: 4 * intervalUs,
      });
      // Two permits need two intervals of room.
      expect(await s.decide('k', 2, intervalUs, 5, T0 + 2 * intervalUs)).toEqual({
        allowed: false,
        retryAfterUs: intervalUs,
        remaining: 1,
        granted: 0,
        aheadUs: 4 * intervalUs,
      });
    });

    it('on the server clock (Redis TIME) admits `burst` calls from idle and refuses the next for at most one interval', async () => {
      const s = store();
      const intervalUs = 1_000_000;
      const burst = 4;
      const admitted: GcraDecision[] = [];
      for (let i = 0; i < burst; i++) admitted.push(await s.decide('k', 1, intervalUs, burst));
      expect(admitted.map((d) => d.allowed)).toEqual([true, true, true, true]);
      expect(admitted.map((d) => d.remaining)).toEqual([3, 2, 1, 0]);
      const refused = await s.decide('k', 1, intervalUs, burst);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterUs).toBeGreaterThan(intervalUs - 500_000);
      expect(refused.retryAfterUs).toBeLessThanOrEqual(intervalUs);
    });

    it('gives every key it writes a TTL that ends when its TAT passes', async () => {
      const s = store();
      const intervalUs = 1_234_567;
      await s.decide('exact', 1, intervalUs, 3, T0);
      // PX = ceil(1234.567 ms) = 1235, counting down since the write.
      const pttl = (await redis().command('PTTL', s.redisKey('exact'))) as number;
      expect(pttl).toBeGreaterThan(1_200);
      expect(pttl).toBeLessThanOrEqual(1_235);

      // On the server clock; intervals of 10 s, so no key expires during the test.
      await inBatches(300, 30, (i) =>
        s.decide(`k${i % 37}`, 1 + (i % 3), 10_000_000 + i, 1 + (i % 5)),
      );
      const keys = await scanKeys(redis().command, `${s.prefix}{${s.name}}:*`);
      expect(keys.length).toBe(38);
      for (const key of keys) {
        const ttl = (await redis().command('PTTL', key)) as number;
        expect(ttl, key).toBeGreaterThan(0);
        // At most burst * interval: 5 * 10.0003 s.
        expect(ttl, key).toBeLessThanOrEqual(50_002);
      }
      // No key at all on the server lacks a TTL.
      for (const key of await scanKeys(redis().command, '*')) {
        expect(await redis().command('PTTL', key), key).not.toBe(-1);
      }
    });

    it('a key that expired reads as idle: the next decision gets the full burst again', async () => {
      const s = store();
      // 300 ms interval, burst 2: the key lives at most 600 ms.
      expect((await s.decide('k', 2, 300_000, 2)).remaining).toBe(0);
      expect((await s.decide('k', 1, 300_000, 2)).allowed).toBe(false);
      // Redis expires keys lazily and ten times a second; a busy machine delays both.
      const deadline = Date.now() + 10_000;
      while ((await redis().command('EXISTS', s.redisKey('k'))) === 1) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await s.decide('k', 1, 300_000, 2)).toEqual({
        allowed: true,
        retryAfterUs: 0,
        remaining: 1,
        granted: 1,
        aheadUs: 0,
      });
    });

    it('sends exactly one EVALSHA per decision, plus one SCRIPT LOAD (and one failed EVALSHA) after a flush', async () => {
      const s = store();
      await redis().command('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 50; i++) await s.decide(`k${i % 5}`, 1, 10_000, 10);
      let stats = commandStats(await redis().command('INFO', 'commandstats'));
      expect(stats.evalsha).toEqual({ calls: 51, failed: 1 });
      expect(stats['script|load']).toEqual({ calls: 1, failed: 0 });
      expect(stats.eval).toBeUndefined();

      await redis().command('CONFIG', 'RESETSTAT');
      await inBatches(300, 100, (i) => s.decide(`k${i % 7}`, 1, 10_000, 10));
      stats = commandStats(await redis().command('INFO', 'commandstats'));
      expect(stats.evalsha).toEqual({ calls: 300, failed: 0 });
      expect(stats['script|load']).toBeUndefined();
      expect(stats.eval).toBeUndefined();
      // Commands run by the script are counted too: one GET per decision.
      expect(stats.get).toEqual({ calls: 300, failed: 0 });
    });

    it('after a flush, 100 concurrent decisions load the script once between them', async () => {
      const s = store();
      await redis().command('CONFIG', 'RESETSTAT');
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => s.decide(`k${i}`, 1, 10_000, 10)),
      );
      expect(results.every((r) => r.allowed)).toBe(true);
      const stats = commandStats(await redis().command('INFO', 'commandstats'));
      expect(stats['script|load']).toEqual({ calls: 1, failed: 0 });
      // Each failed EVALSHA (NOSCRIPT) is followed by exactly one more.
      expect(stats.evalsha!.calls - stats.evalsha!.failed).toBe(100);
      expect(stats.eval).toBeUndefined();
    });

    it('load() puts the script in the cache ahead of the first decision', async () => {
      const s = store();
      await s.load();
      await redis().command('CONFIG', 'RESETSTAT');
      for (let i = 0; i < 10; i++) await s.decide('k', 1, 10_000, 10);
      const stats = commandStats(await redis().command('INFO', 'commandstats'));
      expect(stats.evalsha).toEqual({ calls: 10, failed: 0 });
      expect(stats['script|load']).toBeUndefined();
    });

    it('loses no decision when SCRIPT FLUSH runs again and again mid-run', async () => {
      const s = store();
      let flushes = 0;
      let running = true;
      const flusher = (async () => {
        while (running) {
          await redis().command('SCRIPT', 'FLUSH');
          flushes++;
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      })();
      const outcomes = await inBatches(3_000, 25, (i) =>
        s.decide(`k${i % 50}`, 1, 1_000, 1_000).then(
          () => 'ok',
          (error: unknown) => error,
        ),
      );
      running = false;
      await flusher;
      expect(outcomes.filter((o) => o !== 'ok')).toEqual([]);
      expect(flushes).toBeGreaterThan(5);
      expect(s.pending).toBe(0);
    });

    it('passes keys with braces, spaces, unicode and prototype names as data, one key each, all in the limiter slot', async () => {
      const name = `odd-${factory.kind}`;
      const s = store({ name });
      const keys = [
        '',
        ' ',
        'a b',
        '{',
        '}',
        '{}',
        '{other}',
        'x}{y',
        '__proto__',
        'constructor',
        'hasOwnProperty',
        'ключ',
        '🔑',
        '*',
        "'); redis.call('FLUSHALL') --",
        '\r\nPING\r\n',
        'a\u0000b',
      ];
      for (const key of keys) {
        expect(await s.decide(key, 1, 1_000_000, 1, T0), JSON.stringify(key)).toMatchObject({
          allowed: true,
        });
      }
      for (const key of keys) {
        expect(await s.decide(key, 1, 1_000_000, 1, T0), JSON.stringify(key)).toMatchObject({
          allowed: false,
        });
        expect(await redis().command('GET', s.redisKey(key)), JSON.stringify(key)).toBe(
          String(T0 + 1_000_000),
        );
        expect(hashTag(s.redisKey(key))).toBe(name);
      }
      const stored = await scanKeys(redis().command, `${s.prefix}{${name}}:*`);
      expect(stored.sort()).toEqual(keys.map((k) => s.redisKey(k)).sort());
    });
  });
});
