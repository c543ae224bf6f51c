import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  ConfigError,
  defaultRegistry,
  OptionsError,
  pipeline,
  Registry,
  Retry,
  Timeout,
  UsageError,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import { optionsError } from '../support/errors.js';

describe('named instances', () => {
  it('each accessor returns the same instance for a name every time', () => {
    const registry = new Registry({ timeouts: { t: { timeout: 100 } } });
    expect(registry.circuitBreaker('a')).toBe(registry.circuitBreaker('a'));
    expect(registry.retry('a')).toBe(registry.retry('a'));
    expect(registry.timeout('t')).toBe(registry.timeout('t'));
    expect(registry.bulkhead('a')).toBe(registry.bulkhead('a'));
    expect(registry.circuitBreaker('a')).not.toBe(registry.circuitBreaker('b'));
  });

  it('builds the right class, named after the entry', () => {
    const registry = new Registry({ defaults: { timeout: { timeout: 100 } } });
    expect(registry.circuitBreaker('a')).toBeInstanceOf(CircuitBreaker);
    expect(registry.retry('a')).toBeInstanceOf(Retry);
    expect(registry.timeout('a')).toBeInstanceOf(Timeout);
    expect(registry.bulkhead('a')).toBeInstanceOf(Bulkhead);
    for (const p of [
      registry.circuitBreaker('a'),
      registry.retry('a'),
      registry.timeout('a'),
      registry.bulkhead('a'),
    ]) {
      expect(p.name).toBe('a');
    }
  });

  it('each kind has its own names: a breaker and a bulkhead may share one', () => {
    const registry = new Registry();
    const breaker = registry.circuitBreaker('db');
    const pool = registry.bulkhead('db');
    expect(breaker).not.toBe(pool as unknown);
    expect(registry.circuitBreaker('db')).toBe(breaker);
  });

  it('gives every policy it builds the registry clock', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { defaults: { timeout: { timeout: 50 } }, circuitBreakers: { b: { breakDuration: 100 } } },
      { clock },
    );
    const breaker = registry.circuitBreaker('b');
    expect(breaker.clock).toBe(clock);
    expect(registry.retry('r').clock).toBe(clock);
    expect(registry.bulkhead('q').clock).toBe(clock);
    const t = registry.timeout('t');
    expect(t.clock).toBe(clock);
    const call = pipeline(t).execute(
      ({ signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );
    const outcome = call.catch((e: unknown) => e);
    await clock.advanceAsync(50);
    expect((await outcome) as Error).toMatchObject({ name: 'TimeoutError' });
  });

  it('rejects a name that is not a non-empty string', () => {
    const registry = new Registry();
    expect(() => registry.circuitBreaker('')).toThrow(OptionsError);
    expect(() => registry.bulkhead(5 as unknown as string)).toThrow(OptionsError);
    expect(() => registry.keyedCircuitBreaker('', 'k')).toThrow(OptionsError);
    expect(() => registry.keyedCircuitBreaker('api', 5 as unknown as string)).toThrow(
      /Expected `key` to be a string of at most 1024 characters, got 5/,
    );
  });

  it('rejects a key longer than 1,024 characters from every keyed accessor, naming its length, and builds nothing', () => {
    const registry = new Registry({ rateLimiters: { api: { limit: 10, period: '1s' } } });
    const longest = 'k'.repeat(1024);
    const huge = 'k'.repeat(1024 * 1024);
    const accessors = [
      (key: string) => registry.keyedCircuitBreaker('api', key),
      (key: string) => registry.keyedBulkhead('api', key),
      (key: string) => registry.keyedRateLimiter('api', key),
    ];
    for (const get of accessors) {
      expect(() => get(longest)).not.toThrow();
      const error = optionsError(() => get(`${longest}x`));
      expect(error).toMatchObject({ option: 'key' });
      expect(error.message).toBe(
        `Expected \`key\` to be a string of at most 1024 characters, got a string of 1025 characters starting ${JSON.stringify('k'.repeat(40))}`,
      );
      expect(() => get(huge)).toThrow(/got a string of 1048576 characters/);
      expect(() => get(undefined as unknown as string)).toThrow(OptionsError);
    }
    // Only the keys of the right length were added.
    expect(registry.snapshot().instances.map((i) => i.key?.length)).toEqual([1024, 1024, 1024]);
  });

  it('rejects options that are not the registry own', () => {
    expect(() => new Registry({}, { clok: new ManualClock() } as never)).toThrow(
      /did you mean `clock`/,
    );
    expect(() => new Registry({}, { clock: {} as never })).toThrow(OptionsError);
  });
});

describe('register', () => {
  it('makes an instance built in code the one a name returns, predicates included', () => {
    const registry = new Registry({ circuitBreakers: { payments: { breakDuration: 5 } } });
    const own = new CircuitBreaker({ name: 'custom', handle: (e) => e !== 'ignored' });
    registry.register('payments', own);
    expect(registry.circuitBreaker('payments')).toBe(own);
    const retry = new Retry({ maxAttempts: 2 });
    registry.register('payments', retry);
    expect(registry.retry('payments')).toBe(retry);
  });

  it('throws when the kind already has an instance of that name, built or registered', () => {
    const registry = new Registry();
    registry.circuitBreaker('taken');
    expect(() => registry.register('taken', new CircuitBreaker())).toThrow(UsageError);
    registry.register('mine', new Bulkhead(2));
    expect(() => registry.register('mine', new Bulkhead(3))).toThrow(
      /already has a bulkhead named "mine"/,
    );
    // Another kind under the same name is fine.
    registry.register('taken', new Bulkhead(1));
  });

  it('refuses anything but the five kinds it holds', () => {
    const registry = new Registry();
    expect(() => registry.register('x', {} as never)).toThrow(OptionsError);
  });
});

describe('snapshot', () => {
  it('lists every instance as plain data that survives JSON unchanged', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        defaults: { timeout: { timeout: 1_000 } },
        circuitBreakers: { payments: { window: { kind: 'consecutive', threshold: 1 } } },
        bulkheads: { pool: { maxConcurrent: 2 } },
      },
      { clock },
    );
    const breaker = registry.circuitBreaker('payments');
    breaker.trip();
    registry.retry('payments');
    registry.timeout('payments');
    const pool = registry.bulkhead('pool');
    const gate = deferred();
    const running = pipeline(pool).execute(() => gate.promise);
    registry.keyedCircuitBreaker('api', 'a.example');
    registry.keyedBulkhead('tenant', 't1');

    const snapshot = registry.snapshot();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot.instances).toEqual([
      {
        kind: 'circuitBreaker',
        name: 'payments',
        state: 'open',
        stats: expect.objectContaining({ state: 'open', generation: 1, rejections: 0 }),
      },
      { kind: 'retry', name: 'payments', stats: { waiting: 0, retries: 0, gaveUp: 0 } },
      { kind: 'timeout', name: 'payments', stats: { timeout: 1_000, timeouts: 0 } },
      {
        kind: 'bulkhead',
        name: 'pool',
        stats: {
          inFlight: 1,
          queueLength: 0,
          maxConcurrent: 2,
          admitted: 1,
          rejectionsByReason: { full: 0, queueTimeout: 0, codel: 0 },
          queue: 'fifo',
          dropping: false,
        },
      },
      {
        kind: 'circuitBreaker',
        name: 'api',
        key: 'a.example',
        state: 'closed',
        stats: expect.objectContaining({ state: 'closed', callsInWindow: 0 }),
      },
      {
        kind: 'bulkhead',
        name: 'tenant',
        key: 't1',
        stats: {
          inFlight: 0,
          queueLength: 0,
          maxConcurrent: 10,
          admitted: 0,
          rejectionsByReason: { full: 0, queueTimeout: 0, codel: 0 },
          queue: 'fifo',
          dropping: false,
        },
      },
    ]);
    for (const entry of snapshot.instances) {
      expect(Object.getPrototypeOf(entry)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(entry.stats)).toBe(Object.prototype);
    }
    gate.resolve(1);
    await running;
    expect(registry.snapshot().instances[3]).toMatchObject({ stats: { inFlight: 0 } });
  });

  it('is empty for a registry nothing was asked of', () => {
    expect(new Registry({ circuitBreakers: { a: {} } }).snapshot()).toEqual({ instances: [] });
  });
});

describe('dispose', () => {
  it('disposes every instance, registered and keyed ones included, and forgets them', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { bulkheads: { q: { maxConcurrent: 1, maxQueue: 5 } } },
      { clock },
    );
    const q = registry.bulkhead('q');
    const retry = registry.retry('r');
    const own = new Timeout({ timeout: 100, clock });
    registry.register('own', own);
    const breaker = registry.circuitBreaker('b');
    let events = 0;
    breaker.onStateChange(() => events++);
    const keyed = registry.keyedBulkhead('tenant', 't1');

    const gate = deferred();
    const first = pipeline(q).execute(() => gate.promise);
    const queued = pipeline(q).execute(() => 'never');
    const waiting = pipeline(retry).execute(() => {
      throw new Error('again');
    });
    const queuedOutcome = queued.catch((e: unknown) => e);
    const waitingOutcome = waiting.catch((e: unknown) => e);
    await clock.advanceAsync(0);
    // Never settles: after dispose its deadline is forgotten, so nothing aborts it.
    void pipeline(own).execute(() => new Promise(() => {}));
    expect(own.pending).toBe(1);
    expect(clock.pendingTimers).toBeGreaterThan(0);

    registry.dispose();

    expect(await queuedOutcome).toBeInstanceOf(UsageError);
    expect(await waitingOutcome).toBeInstanceOf(UsageError);
    expect(own.pending).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    breaker.trip();
    expect(events).toBe(0);
    expect(registry.snapshot()).toEqual({ instances: [] });
    expect(registry.bulkhead('q')).not.toBe(q);
    expect(registry.keyedBulkhead('tenant', 't1')).not.toBe(keyed);
    gate.resolve(1);
    await first;
  });
});

describe('defaultRegistry', () => {
  it('is a Registry that can be configured from data', () => {
    expect(defaultRegistry).toBeInstanceOf(Registry);
    defaultRegistry.reconfigure({ circuitBreakers: { shared: { breakDuration: '5s' } } });
    const breaker = defaultRegistry.circuitBreaker('shared');
    expect(defaultRegistry.circuitBreaker('shared')).toBe(breaker);
    expect(() => defaultRegistry.reconfigure({ keys: { maxKeys: -1 } })).toThrow(ConfigError);
    defaultRegistry.dispose();
    defaultRegistry.reconfigure({});
  });
});
