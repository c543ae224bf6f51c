/**
 * The GCRA script's text: its SHA1 constant matches it, and it stays constant text (keys and
 * values go in KEYS/ARGV only).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GCRA_SCRIPT, GCRA_SCRIPT_SHA } from '../../src/redis/index.js';
import { describeRedis } from '../support/redis-server.js';

describe('GCRA_SCRIPT', () => {
  it('GCRA_SCRIPT_SHA is the SHA1 of the script text (update it when the script changes)', () => {
    expect(GCRA_SCRIPT_SHA).toBe(createHash('sha1').update(GCRA_SCRIPT, 'utf8').digest('hex'));
  });

  it('reads the key and every value from KEYS/ARGV and writes numbers with %.0f, never tostring', () => {
    expect(GCRA_SCRIPT).toContain("redis.call('GET', KEYS[1])");
    expect(GCRA_SCRIPT).toContain("redis.call('SET', KEYS[1], string.format('%.0f', newTat)");
    expect(GCRA_SCRIPT).not.toContain('tostring');
    expect(GCRA_SCRIPT).not.toContain('KEYS[2]');
    expect(GCRA_SCRIPT).not.toContain('ARGV[6]');
  });
});

describeRedis('GCRA_SCRIPT on Redis', (redis) => {
  it('SCRIPT LOAD returns GCRA_SCRIPT_SHA', async () => {
    expect(await redis().command('SCRIPT', 'LOAD', GCRA_SCRIPT)).toBe(GCRA_SCRIPT_SHA);
  });

  it('stores a TAT of 16 digits as an integer string, not in exponent form', async () => {
    const now = 1_700_000_000_000_000;
    const reply = await redis().command('EVAL', GCRA_SCRIPT, 1, 'tat', 1_000_000, 2, 1, now);
    expect(reply).toEqual([1, 0, 1, 1, 0]);
    expect(await redis().command('GET', 'tat')).toBe('1700000001000000');
  });

  it('runs on the server clock when nowUs is empty, and treats a non-numeric value as idle', async () => {
    await redis().command('SET', 'garbage', 'not a number');
    const reply = await redis().command('EVAL', GCRA_SCRIPT, 1, 'garbage', 1_000_000, 3, 1, '');
    expect(reply).toEqual([1, 0, 2, 1, 0]);
    const [seconds, micros] = (await redis().command('TIME')) as [string, string];
    const serverNow = Number(seconds) * 1_000_000 + Number(micros);
    const tat = Number(await redis().command('GET', 'garbage'));
    expect(tat - serverNow).toBeGreaterThan(900_000);
    expect(tat - serverNow).toBeLessThanOrEqual(1_000_000);
  });
});
