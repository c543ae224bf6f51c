import { describe, expect, it } from 'vitest';
import { ConfigError, ErrorCode, parseDuration, Registry } from '../../src/index.js';
import { resolved } from '../support/config.js';
import { errorOf } from '../support/errors.js';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['0ms', 0],
    ['30s', 30_000],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['0.25ms', 0.25],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['24h', 86_400_000],
    [250, 250],
    [0, 0],
    [1.5, 1.5],
  ])('reads %j as %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each([
    '250',
    '30 s',
    ' 30s',
    '30S',
    '1d',
    '-5s',
    '+5s',
    '1e3ms',
    '.5s',
    '5.s',
    '1h30m',
    '',
    'ms',
    'Infinity',
    '0x10ms',
    '٣s',
  ])('rejects the string %j', (input) => {
    expect(() => parseDuration(input)).toThrow(ConfigError);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, 2_147_483_648])(
    'rejects the number %d (outside [0, 2147483647])',
    (input) => {
      expect(() => parseDuration(input)).toThrow(ConfigError);
    },
  );

  it('rejects a string beyond the longest timer even when well-formed', () => {
    expect(() => parseDuration('1000h')).toThrow(ConfigError);
    expect(parseDuration('596h')).toBe(2_145_600_000);
  });

  it('names the path it was given in the error, with the value and the accepted forms', () => {
    const e = errorOf(ConfigError, () => parseDuration('30 seconds', 'retries.api.delay'));
    expect(e.code).toBe(ErrorCode.InvalidConfig);
    expect(e.issues).toEqual([
      {
        path: 'retries.api.delay',
        message: expect.stringContaining('got "30 seconds"'),
      },
    ]);
    expect(e.message).toContain('retries.api.delay: expected a duration');
    expect(e.message).toContain('"250ms"');
  });

  it('says a bare digit string needs a unit', () => {
    expect(() => parseDuration('250')).toThrow(/needs a unit/);
  });
});

describe('durations in config data', () => {
  it('are converted to ms for every duration option of every kind', () => {
    const registry = new Registry({
      circuitBreakers: {
        b: {
          window: { kind: 'time', duration: '10s', buckets: 10 },
          slowCallDuration: '1.5s',
          breakDuration: '1m',
          breakBackoff: { maxDuration: '10m' },
          halfOpen: { maxWait: '2m' },
        },
      },
      retries: { r: { delay: '250ms', maxDelay: '5s', maxDuration: '1h' } },
      timeouts: { t: { timeout: '2s' } },
      bulkheads: { q: { maxQueue: 2, queueTimeout: '500ms' } },
    });
    expect(registry.timeout('t').timeout).toBe(2_000);
    const retry = registry.retry('r');
    expect(retry.o.delay).toBe(250);
    expect(retry.o.maxDelay).toBe(5_000);
    expect(retry.o.maxDuration).toBe(3_600_000);
    const breaker = registry.circuitBreaker('b');
    const o = resolved(breaker);
    expect(o).toMatchObject({
      duration: 10_000,
      slowCallDuration: 1_500,
      breakDuration: 60_000,
      backoffMax: 600_000,
      halfOpenMaxWait: 120_000,
    });
    expect(breaker.needsDuration).toBe(true);
    expect(registry.bulkhead('q').needsQueueTime).toBe(true);
  });

  it('accept "Infinity" only where the option allows Infinity', () => {
    const registry = new Registry({
      retries: { forever: { maxAttempts: 'Infinity', maxDuration: '30s' } },
      bulkheads: { q: { maxQueue: 1, queueTimeout: 'Infinity' } },
      circuitBreakers: { b: { slowCallDuration: 'Infinity' } },
      keys: { idleTimeout: 'Infinity' },
    });
    expect(registry.retry('forever').o.maxAttempts).toBe(Number.POSITIVE_INFINITY);
    expect(registry.bulkhead('q').needsQueueTime).toBe(false);
    expect(registry.circuitBreaker('b').needsDuration).toBe(false);
    expect(() => new Registry({ timeouts: { t: { timeout: 'Infinity' } } })).toThrow(
      /timeouts\.t\.timeout: expected a duration/,
    );
  });

  it('refuse maxAttempts "Infinity" without a finite maxDuration: the retry would never end', () => {
    for (const retries of [
      { forever: { maxAttempts: 'Infinity' } },
      { forever: { maxAttempts: 'Infinity', maxDuration: 'Infinity' } },
    ] as const) {
      expect(() => new Registry({ retries })).toThrow(
        /retries\.forever\.maxAttempts: expected .*Infinity only with a finite `maxDuration`/,
      );
    }
  });

  it('report a malformed string with its path and value', () => {
    expect(() => new Registry({ circuitBreakers: { p: { breakDuration: '30 secs' } } })).toThrow(
      /circuitBreakers\.p\.breakDuration: expected a duration.*got "30 secs"/,
    );
  });
});
