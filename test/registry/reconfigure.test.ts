import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  BulkheadRejectedError,
  CircuitBreaker,
  pipeline,
  Registry,
  type RegistryConfig,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import { thrownIssues } from '../support/config.js';

const consecutive = (threshold: number) => ({ kind: 'consecutive' as const, threshold });

function failOnce(breaker: CircuitBreaker): void {
  try {
    pipeline(breaker).executeSync(() => {
      throw new Error('down');
    });
  } catch {}
}

describe('Registry.reconfigure', () => {
  it('keeps an open breaker open, the same instance, with the new settings for what comes next', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { circuitBreakers: { api: { window: consecutive(1), breakDuration: '1s' } } },
      { clock },
    );
    const breaker = registry.circuitBreaker('api');
    failOnce(breaker);
    expect(breaker.state).toBe('open');
    const generation = breaker.generation;

    registry.reconfigure({
      circuitBreakers: { api: { window: consecutive(1), breakDuration: '5s' } },
    });

    expect(registry.circuitBreaker('api')).toBe(breaker);
    expect(breaker.state).toBe('open');
    expect(breaker.generation).toBe(generation);
    expect(() => pipeline(breaker).executeSync(() => 1)).toThrow(BrokenCircuitError);
    clock.advance(1_000);
    expect(breaker.state).toBe('half-open');
    failOnce(breaker);
    clock.advance(4_999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });

  it('keeps the permits a bulkhead has in flight, with the new limit for new calls', async () => {
    const registry = new Registry({ bulkheads: { pool: { maxConcurrent: 2 } } });
    const pool = registry.bulkhead('pool');
    const p = pipeline(pool);
    const gates = [deferred(), deferred()];
    const running = gates.map((g) => p.execute(() => g.promise));
    registry.reconfigure({ bulkheads: { pool: { maxConcurrent: 1 } } });
    expect(pool.inFlight).toBe(2);
    await expect(p.execute(() => 'x')).rejects.toBeInstanceOf(BulkheadRejectedError);
    gates[0]!.resolve(1);
    gates[1]!.resolve(2);
    await Promise.all(running);
    expect(pool.inFlight).toBe(0);
    await expect(p.execute(() => 'y')).resolves.toBe('y');
    expect(pool.maxConcurrent).toBe(1);
  });

  it('changes nothing when any part of the new config is invalid', () => {
    const clock = new ManualClock();
    const config: RegistryConfig = {
      circuitBreakers: { api: { breakDuration: '1s' } },
      retries: { api: { maxAttempts: 3 } },
      bulkheads: { pool: { maxConcurrent: 2 } },
      keys: { maxKeys: 10 },
    };
    const registry = new Registry(config, { clock });
    const breaker = registry.circuitBreaker('api');
    const retry = registry.retry('api');
    const pool = registry.bulkhead('pool');
    registry.keyedCircuitBreaker('hosts', 'a');

    const issues = thrownIssues(() =>
      registry.reconfigure({
        circuitBreakers: { api: { breakDuration: '9s' } },
        retries: { api: { maxAttempts: 0 } },
        bulkheads: { pool: { maxConcurrent: 8 } },
        keys: { maxKeys: 1 },
      }),
    );
    expect(issues).toEqual([
      { path: 'retries.api.maxAttempts', message: 'expected an integer in [1, Infinity], got 0' },
    ]);
    breaker.trip();
    expect(breaker.toJSON().openRemaining).toBe(1_000);
    expect(retry.o.maxAttempts).toBe(3);
    expect(pool.maxConcurrent).toBe(2);
    registry.keyedCircuitBreaker('hosts', 'b');
    expect(registry.snapshot().instances.filter((i) => i.key !== undefined)).toHaveLength(2);
    // The registry still builds new names from the old config.
    expect(registry.bulkhead('pool')).toBe(pool);
    expect(registry.circuitBreaker('new').name).toBe('new');
  });

  it('reports a setting that cannot apply to an instance in use, and then changes nothing', () => {
    const registry = new Registry({
      circuitBreakers: { api: {} },
      bulkheads: { pool: { maxConcurrent: 2 } },
      timeouts: { t: { timeout: '1s' } },
      retries: { r: {} },
    });
    const breaker = registry.circuitBreaker('api');
    const pool = registry.bulkhead('pool');
    registry.timeout('t');
    registry.retry('r');
    const issues = thrownIssues(() =>
      registry.reconfigure({
        circuitBreakers: { api: { slowCallDuration: '2s', breakDuration: 5 } },
        bulkheads: { pool: { maxConcurrent: 4, maxQueue: 10 } },
        timeouts: { t: { timeout: '1s', strategy: 'aggressive' } },
        retries: { r: { maxDuration: '1m' } },
      }),
    );
    expect(issues.map((i) => i.path)).toEqual([
      'circuitBreakers.api.slowCallDuration',
      'retries.r.maxDuration',
      'timeouts.t.strategy',
      'bulkheads.pool.maxQueue',
    ]);
    expect(issues[0]!.message).toMatch(/slow-call tracking cannot be turned on/);
    expect(pool.maxConcurrent).toBe(2);
    breaker.trip();
    expect(breaker.toJSON().openRemaining).toBeGreaterThan(1_000);
  });

  it('reports an instance in use at the reconfigure call, keyed ones in flight included, never at a later call', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        bulkheads: { pools: { maxConcurrent: 1 } },
        rateLimiters: { users: { limit: 1, period: 1_000 } },
        circuitBreakers: { hosts: { window: consecutive(1) } },
      },
      { clock },
    );
    const held = deferred();
    const inFlight = pipeline(registry.keyedBulkhead('pools', 'p1')).execute(() => held.promise);
    registry.keyedRateLimiter('users', 'u1').tryAcquire();
    failOnce(registry.keyedCircuitBreaker('hosts', 'h1'));
    const next: RegistryConfig = {
      bulkheads: { pools: { maxConcurrent: 1, maxQueue: 5 } },
      rateLimiters: { users: { limit: 1, period: 1_000, maxWait: 100 } },
      circuitBreakers: { hosts: { window: consecutive(1), slowCallDuration: '1s' } },
    };
    expect(thrownIssues(() => registry.reconfigure(next)).map((i) => i.path)).toEqual([
      'circuitBreakers.hosts.slowCallDuration',
      'bulkheads.pools.maxQueue',
      'rateLimiters.users.maxWait',
    ]);
    // Nothing changed, so nothing is left to fail later.
    expect(registry.keyedBulkhead('pools', 'p2').mayWait).toBe(false);
    expect(registry.keyedRateLimiter('users', 'u2').mayWait).toBe(false);
    expect(registry.keyedCircuitBreaker('hosts', 'h2').needsDuration).toBe(false);
    held.resolve(undefined);
    await inFlight;
  });

  it('reverts a name whose entry is gone to the defaults, and needs a timeout for a live one', () => {
    const registry = new Registry({
      defaults: { bulkhead: { maxConcurrent: 3 } },
      bulkheads: { pool: { maxConcurrent: 9 } },
      timeouts: { t: { timeout: 100 } },
    });
    const pool = registry.bulkhead('pool');
    const t = registry.timeout('t');
    expect(
      thrownIssues(() => registry.reconfigure({ defaults: { bulkhead: { maxConcurrent: 3 } } })),
    ).toEqual([{ path: 'timeouts.t.timeout', message: expect.stringMatching(/is required/) }]);
    expect(pool.maxConcurrent).toBe(9);
    registry.reconfigure({
      defaults: { bulkhead: { maxConcurrent: 3 }, timeout: { timeout: 250 } },
    });
    expect(pool.maxConcurrent).toBe(3);
    expect(t.timeout).toBe(250);
  });

  it('never changes instances that were registered from code', () => {
    const registry = new Registry({ circuitBreakers: { own: { breakDuration: 10 } } });
    const own = new CircuitBreaker({ name: 'own', breakDuration: 777, slowCallDuration: 5 });
    registry.register('own', own);
    registry.reconfigure({ circuitBreakers: { own: { breakDuration: 1 } } });
    own.trip();
    expect(own.toJSON().openRemaining).toBeGreaterThan(700);
  });

  it('applies new settings to the keyed instances of a name, live and shelved alike', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { circuitBreakers: { hosts: { window: consecutive(3) } } },
      { clock },
    );
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    failOnce(a);
    failOnce(a);
    registry.reconfigure({ circuitBreakers: { hosts: { window: consecutive(2) } } });
    expect(registry.keyedCircuitBreaker('hosts', 'a')).toBe(a);
    expect(a.stats().failuresInWindow).toBe(2);
    failOnce(a);
    expect(a.state).toBe('open');
    const b = registry.keyedCircuitBreaker('hosts', 'b');
    failOnce(b);
    failOnce(b);
    expect(b.state).toBe('open');
  });

  it('drops keyed instances that cannot take new settings unless they are protected', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { circuitBreakers: { hosts: { window: consecutive(1) } } },
      { clock },
    );
    const closed = registry.keyedCircuitBreaker('hosts', 'closed');
    const open = registry.keyedCircuitBreaker('hosts', 'open');
    failOnce(open);
    const next = { circuitBreakers: { hosts: { window: consecutive(1), slowCallDuration: 100 } } };
    expect(thrownIssues(() => registry.reconfigure(next)).map((i) => i.path)).toEqual([
      'circuitBreakers.hosts.slowCallDuration',
    ]);
    expect(registry.keyedCircuitBreaker('hosts', 'closed')).toBe(closed);
    open.reset();
    registry.reconfigure(next);
    const rebuilt = registry.keyedCircuitBreaker('hosts', 'closed');
    expect(rebuilt).not.toBe(closed);
    expect(rebuilt.needsDuration).toBe(true);
  });

  it('applies new key limits: a lower cap evicts down to it at once', () => {
    const registry = new Registry({ keys: { maxKeys: 10 } });
    for (let i = 0; i < 10; i++) registry.keyedBulkhead('tenants', `t${i}`);
    registry.reconfigure({ keys: { maxKeys: 4 } });
    const keys = registry.snapshot().instances.map((i) => i.key);
    expect(keys).toEqual(['t9', 't8', 't7', 't6']);
  });
});

describe('Registry.reconfigure with several problems', () => {
  it('reports every problem: invalid data and a change an instance cannot take, together', () => {
    const registry = new Registry({
      timeouts: { t: { timeout: 100 } },
      retries: { q: {} },
      retryBudgets: { b: {} },
    });
    registry.timeout('t');
    registry.retry('q');
    const issues = thrownIssues(() =>
      registry.reconfigure({
        timeouts: { t: { timeout: -1 } },
        retries: { q: { budget: 'b' } },
        retryBudgets: { b: {} },
      }),
    );
    expect(issues.map((i) => i.path)).toEqual(['timeouts.t.timeout', 'retries.q.budget']);
    expect(issues[1]!.message).toMatch(/budget cannot change/);
    // Nothing changed.
    expect(registry.retry('q').budget).toBeUndefined();
  });
});
