/**
 * The GCRA script's text: its SHA1 constant matches it, and it stays constant text (keys and
 * values go in KEYS/ARGV only).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GCRA_SCRIPT, GCRA_SCRIPT_SHA } from '../../src/redis/index.js';
import { decisionOf } from '../../src/redis/script.js';
import { MAX_NOW_US } from '../../src/redis/storeOptions.js';
import { describeRedis } from '../support/redis-server.js';

describe('GCRA_SCRIPT', () => {
  it('GCRA_SCRIPT_SHA is the SHA1 of the script text (update it when the script changes)', () => {
    expect(GCRA_SCRIPT_SHA).toBe(createHash('sha1').update(GCRA_SCRIPT, 'utf8').digest('hex'));
  });

  it('reads the key and every value from KEYS/ARGV and hands numbers to Redis as numbers, never through tostring', () => {
    expect(GCRA_SCRIPT).toContain("redis.call('GET', KEYS[1])");
    expect(GCRA_SCRIPT).toContain("redis.call('SET', KEYS[1], newTat, 'PX', ttl)");
    expect(GCRA_SCRIPT).not.toContain('tostring');
    expect(GCRA_SCRIPT).not.toContain('KEYS[2]');
    expect(GCRA_SCRIPT).not.toContain('ARGV[6]');
  });
});

describe('decisionOf', () => {
  it('reads a grant, a refusal and the remaining permits from the two integers of a reply', () => {
    // interval 1,000 µs, burst 5: a TAT 1,500 µs ahead, then 2 permits granted, leaves 1.
    expect(decisionOf([2, 1_500], 1_000, 5)).toEqual({
      allowed: true,
      retryAfterUs: 0,
      remaining: 1,
      granted: 2,
      aheadUs: 1_500,
    });
    expect(decisionOf([-700, 4_700], 1_000, 5)).toEqual({
      allowed: false,
      retryAfterUs: 700,
      remaining: 0,
      granted: 0,
      aheadUs: 4_700,
    });
    // Integers as strings or bigints (node-redis type mappings) read the same.
    expect(decisionOf(['2', 1_500n], 1_000, 5)?.remaining).toBe(1);
  });

  it('takes no other reply for a decision', () => {
    for (const reply of [[1, 0, 1, 1, 0], [0, 10], [1, -1], [1.5, 0], ['x', 0], 'OK', null, [1]]) {
      expect(decisionOf(reply, 1_000, 5), JSON.stringify(reply)).toBeUndefined();
    }
  });
});

describeRedis('GCRA_SCRIPT on Redis', (redis) => {
  it('SCRIPT LOAD returns GCRA_SCRIPT_SHA', async () => {
    expect(await redis().command('SCRIPT', 'LOAD', GCRA_SCRIPT)).toBe(GCRA_SCRIPT_SHA);
  });

  it('stores a TAT of 16 digits as an integer string, not in exponent form', async () => {
    const now = 1_700_000_000_000_000;
    const reply = await redis().command('EVAL', GCRA_SCRIPT, 1, 'tat', 1_000_000, 2, 1, now);
    expect(reply).toEqual([1, 0]);
    expect(await redis().command('GET', 'tat')).toBe('1700000001000000');
  });

  it('stores the largest TAT the store allows (below 2^53) in full digits', async () => {
    const now = MAX_NOW_US;
    const interval = 2 ** 50;
    const reply = await redis().command('EVAL', GCRA_SCRIPT, 1, 'far', interval, 1, 1, now);
    expect(reply).toEqual([1, 0]);
    expect(await redis().command('GET', 'far')).toBe(String(now + interval));
    expect(now + interval).toBeLessThan(2 ** 53);
  });

  it('answers a refusal with minus the wait and how far the TAT is ahead', async () => {
    const now = 1_000_000_000;
    // A 10 s interval: the key lives 20 s of the server's real time, so it is still there for
    // the second call however late a busy machine sends it (with 1 ms it lived 2 ms).
    const interval = 10_000_000;
    await redis().command('EVAL', GCRA_SCRIPT, 1, 'full', interval, 2, 2, now);
    const later = now + 3_000_000;
    const reply = await redis().command('EVAL', GCRA_SCRIPT, 1, 'full', interval, 2, 1, later);
    // TAT = now + 20 s; one more permit is free at TAT + 10 s - 20 s = now + 10 s.
    expect(reply).toEqual([-7_000_000, 17_000_000]);
  });

  it('runs on the server clock when nowUs is empty or absent, and treats a non-numeric value as idle', async () => {
    await redis().command('SET', 'garbage', 'not a number');
    const reply = await redis().command('EVAL', GCRA_SCRIPT, 1, 'garbage', 1_000_000, 3, 1, '');
    expect(reply).toEqual([1, 0]);
    expect(await redis().command('EVAL', GCRA_SCRIPT, 1, 'absent', 1_000_000, 3, 1)).toEqual([
      1, 0,
    ]);
    const [seconds, micros] = (await redis().command('TIME')) as [string, string];
    const serverNow = Number(seconds) * 1_000_000 + Number(micros);
    const tat = Number(await redis().command('GET', 'garbage'));
    expect(tat - serverNow).toBeGreaterThan(900_000);
    expect(tat - serverNow).toBeLessThanOrEqual(1_000_000);
  });
});
