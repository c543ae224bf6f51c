/**
 * RedisGcraStore options and arguments: checked at construction / per call with OptionsError
 * naming the option, and dispose().
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionsError, UsageError } from '../../src/index.js';
import {
  MAX_NOW_US,
  MAX_SPAN_US,
  RedisGcraStore,
  type RedisGcraStoreOptions,
  RedisRateLimiter,
  redisGcraStoreDefaults,
  redisRateLimiterDefaults,
} from '../../src/redis/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { optionsError } from '../support/errors.js';
import { type ConnectedClient, ioredisFactory } from '../support/redis-clients.js';
import { describeRedis } from '../support/redis-server.js';

/** A real client that never connects: these tests fail before any command is sent. */
const client = new Redis({ lazyConnect: true, enableOfflineQueue: false });

describe('RedisGcraStore options', () => {
  it('has documented defaults', () => {
    expect(redisGcraStoreDefaults).toEqual({
      name: 'rateLimiter',
      prefix: 'breakwater:',
      timeout: 200,
    });
    const store = new RedisGcraStore({ client });
    expect(store.name).toBe('rateLimiter');
    expect(store.prefix).toBe('breakwater:');
    expect(store.timeout).toBe(200);
    expect(store.redisKey('user:1')).toBe('breakwater:{rateLimiter}:user:1');
  });

  it('builds keys as prefix{name}:key, with an empty prefix allowed', () => {
    expect(new RedisGcraStore({ client, name: 'api', prefix: 'rl:' }).redisKey('k')).toBe(
      'rl:{api}:k',
    );
    expect(new RedisGcraStore({ client, name: 'api', prefix: '' }).redisKey('k')).toBe('{api}:k');
  });

  it('needs a recognised client', () => {
    expect(
      optionsError(() => new RedisGcraStore(undefined as unknown as RedisGcraStoreOptions)).option,
    ).toBe('client');
    const error = optionsError(
      () => new RedisGcraStore({ client: {} } as unknown as RedisGcraStoreOptions),
    );
    expect(error.option).toBe('client');
    expect(error.message).toMatch(/an ioredis client, a node-redis client or a RedisClientAdapter/);
  });

  it.each([
    ['name', ''],
    ['name', 'a{b'],
    ['name', 'a}b'],
    ['name', 42],
    ['prefix', 'x{'],
    ['prefix', '}'],
    ['prefix', null],
    ['timeout', 0],
    ['timeout', -5],
    ['timeout', Number.NaN],
    ['timeout', Number.POSITIVE_INFINITY],
    ['timeout', 2_147_483_648],
    ['timeout', '20'],
    ['onWarning', 'console'],
    ['clock', {}],
  ])('rejects %s = %o', (option, value) => {
    const error = optionsError(
      () => new RedisGcraStore({ client, [option]: value } as unknown as RedisGcraStoreOptions),
    );
    expect(error.option).toBe(option);
    expect(error.value).toBe(value);
  });

  it('rejects unknown options with a suggestion', () => {
    const error = optionsError(
      () => new RedisGcraStore({ client, timout: 10 } as unknown as RedisGcraStoreOptions),
    );
    expect(error.option).toBe('timout');
    expect(error.message).toMatch(/did you mean `timeout`/);
  });
});

describe('RedisGcraStore.decide arguments', () => {
  const store = new RedisGcraStore({ client, onWarning: () => {} });

  it.each([
    ['key', [42, 1, 1_000, 1]],
    ['key', ['k'.repeat(1_025), 1, 1_000, 1]],
    ['permits', ['k', 0, 1_000, 1]],
    ['permits', ['k', 1.5, 1_000, 1]],
    ['permits', ['k', MAX_SPAN_US / 1_000 + 1, 1_000, 1]],
    ['intervalUs', ['k', 1, 0, 1]],
    ['intervalUs', ['k', 1, 2.5, 1]],
    ['intervalUs', ['k', 1, MAX_SPAN_US + 1, 1]],
    ['intervalUs', ['k', 1, Number.NaN, 1]],
    ['burst', ['k', 1, 1_000, 0]],
    ['burst', ['k', 1, 1_000, MAX_SPAN_US / 1_000 + 1]],
    ['nowUs', ['k', 1, 1_000, 1, -1]],
    ['nowUs', ['k', 1, 1_000, 1, MAX_NOW_US + 1]],
    ['nowUs', ['k', 1, 1_000, 1, 1.5]],
  ])('rejects (not throws) a bad %s before sending anything', async (option, args) => {
    const decide = store.decide as (...a: unknown[]) => Promise<unknown>;
    const result = decide.apply(store, args);
    await expect(result).rejects.toBeInstanceOf(OptionsError);
    await expect(result).rejects.toMatchObject({ option });
    expect(store.pending).toBe(0);
  });

  it('names the longest key in its error', async () => {
    await expect(store.decide('k'.repeat(1_025), 1, 1_000, 1)).rejects.toThrow(
      /Expected `key` to be a string of at most 1024 characters/,
    );
  });
});

describe('RedisRateLimiter options', () => {
  it('has documented defaults', () => {
    expect(redisRateLimiterDefaults).toEqual({
      timeout: 200,
      onStoreFailure: 'local',
      localShare: 1,
      probeInterval: 500,
      negativeCache: true,
      maxKeys: 100_000,
      lease: 1,
      key: '',
    });
    const limiter = new RedisRateLimiter({ client, limit: 10, onWarning: () => {} });
    expect(limiter.store.timeout).toBe(200);
    expect(new RedisRateLimiter({ client, limit: 10, timeout: 50 }).store.timeout).toBe(50);
  });

  it('rejects (not throws) a key that is not a string of at most 1,024 characters', async () => {
    const limiter = new RedisRateLimiter({ client, limit: 10, onWarning: () => {} });
    for (const key of [undefined, 42, 'k'.repeat(1_025)]) {
      const result = limiter.tryAcquire(key as string);
      await expect(result).rejects.toBeInstanceOf(OptionsError);
      await expect(result).rejects.toMatchObject({ option: 'key', value: key });
    }
    expect(limiter.stats().roundTrips).toBe(0);
  });
});

describeRedis('RedisGcraStore.dispose', (redis) => {
  let connected: ConnectedClient;
  beforeAll(async () => {
    connected = await ioredisFactory.connect(redis().port);
  });
  afterAll(async () => {
    await connected?.close();
  });

  it('rejects pending decisions and later ones with UsageError, and cancels the timer', async () => {
    const clock = new ManualClock();
    const store = new RedisGcraStore({ client: connected.client, clock, timeout: 50 });
    await store.load();
    expect(await redis().command('CLIENT', 'PAUSE', 100)).toBe('OK');
    const pending = [store.decide('k', 1, 1_000, 10), store.decide('k', 1, 1_000, 10)];
    expect(store.pending).toBe(2);
    expect(clock.pendingTimers).toBe(1);
    store.dispose();
    expect(store.pending).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    for (const p of pending) await expect(p).rejects.toBeInstanceOf(UsageError);
    await expect(store.decide('k', 1, 1_000, 10)).rejects.toThrow(
      'Store "rateLimiter" was disposed',
    );
    store.dispose();
    // The late replies (after the pause) are ignored.
    await new Promise((resolve) => setTimeout(resolve, 250));
  });
});
