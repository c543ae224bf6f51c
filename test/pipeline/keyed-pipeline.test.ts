import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  BrokenCircuitError,
  type Bulkhead,
  BulkheadRejectedError,
  type CircuitBreaker,
  ConfigError,
  KeyedPipeline,
  OptionsError,
  Pipeline,
  pipeline,
  RateLimitedError,
  Registry,
  type RegistryConfig,
  retry,
  timeout,
  UsageError,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { deferred, track, untilAborted } from '../support/async.js';
import { type ConcurrencyCap, concurrencyCapKind } from '../support/concurrencyCapKind.js';

/** Breakers of name `hosts` that open after `threshold` failures in a row, for 10 s. */
const breakers = (threshold: number, extra: RegistryConfig = {}): RegistryConfig => ({
  ...extra,
  circuitBreakers: {
    hosts: { window: { kind: 'consecutive', threshold }, breakDuration: '10s' },
  },
});

const ok = () => 'ok';
const fail = (): never => {
  throw new Error('down');
};

async function settle<T>(promise: Promise<T>): Promise<{ ok: boolean; value: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, value: error };
  }
}

describe('a pipeline with a keyed step', () => {
  it('is a KeyedPipeline, typed so; a pipeline without one stays a Pipeline', () => {
    const registry = new Registry();
    const keyed = pipeline(retry(), registry.keyed('circuitBreaker', 'hosts'));
    expect(keyed).toBeInstanceOf(KeyedPipeline);
    expectTypeOf(keyed).toEqualTypeOf<KeyedPipeline<unknown>>();
    const plain = pipeline(retry(), registry.circuitBreaker('hosts'));
    expect(plain).toBeInstanceOf(Pipeline);
    expectTypeOf(plain).toEqualTypeOf<Pipeline<unknown>>();
    const typed = pipeline(retry<number>(), registry.keyed('circuitBreaker', 'hosts'));
    expectTypeOf(typed).toEqualTypeOf<KeyedPipeline<number>>();
    // @ts-expect-error: its functions must return the result type of its policies
    void typed.execute(() => 'a string', { key: 'a' }).catch(() => {});
  });

  it("isolates keys: key A's breaker opens, key B's still calls", async () => {
    const registry = new Registry(breakers(1));
    const p = pipeline(registry.keyed<CircuitBreaker>('circuitBreaker', 'hosts'));
    expect((await settle(p.execute(fail, { key: 'a' }))).ok).toBe(false);
    let called = 0;
    const refused = await settle(p.execute(() => ++called, { key: 'a' }));
    expect(refused.value).toBeInstanceOf(BrokenCircuitError);
    expect(await p.execute(() => ++called, { key: 'b' })).toBe(1);
    expect(registry.keyedCircuitBreaker('hosts', 'a').state).toBe('open');
    expect(registry.keyedCircuitBreaker('hosts', 'b').state).toBe('closed');
  });

  it('uses the instance the registry holds for the key, made on the first call of a new key', async () => {
    const registry = new Registry(breakers(5));
    const p = pipeline(registry.keyed('circuitBreaker', 'hosts'));
    expect(registry.snapshot().instances.filter((i) => i.key !== undefined)).toEqual([]);
    await p.execute(ok, { key: 'a' });
    await p.execute(ok, { key: 'a' });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    expect(a.stats().successes).toBe(2);
    expect(registry.snapshot().instances.map((i) => i.key)).toEqual(['a']);
  });

  it('after the registry evicts a key, its next call gets a fresh instance, never the evicted one', async () => {
    const registry = new Registry(breakers(2, { keys: { maxKeys: 1 } }));
    const p = pipeline(registry.keyed<CircuitBreaker>('circuitBreaker', 'hosts'));
    await settle(p.execute(fail, { key: 'a' }));
    const evicted = registry.keyedCircuitBreaker('hosts', 'a');
    expect(evicted.stats().failures).toBe(1);
    // Over the cap of one key: `a`, closed, is evicted (and disposed) to make room for `b`.
    await p.execute(ok, { key: 'b' });
    // One failure more on the evicted breaker would open it; the fresh one stays closed.
    await settle(p.execute(fail, { key: 'a' }));
    const current = registry.keyedCircuitBreaker('hosts', 'a');
    expect(current).not.toBe(evicted);
    expect(current.state).toBe('closed');
    expect(current.stats().failures).toBe(1);
    expect(evicted.stats().failures).toBe(1);
  });

  it('after a key goes idle past keys.idleTimeout, its next call gets a fresh instance', async () => {
    const clock = new ManualClock();
    const registry = new Registry(breakers(2, { keys: { idleTimeout: '1m' } }), { clock });
    const p = pipeline(registry.keyed('circuitBreaker', 'hosts'));
    await settle(p.execute(fail, { key: 'a' }));
    const before = registry.keyedCircuitBreaker('hosts', 'a');
    clock.advance(60_000);
    await settle(p.execute(fail, { key: 'a' }));
    const after = registry.keyedCircuitBreaker('hosts', 'a');
    expect(after).not.toBe(before);
    expect(after.state).toBe('closed');
    expect(after.stats().failures).toBe(1);
  });

  it('after registry.dispose(), calls get new instances rather than the disposed ones', async () => {
    const registry = new Registry(breakers(1));
    const p = pipeline(registry.keyed('circuitBreaker', 'hosts'));
    await settle(p.execute(fail, { key: 'a' }));
    registry.dispose();
    expect(await p.execute(ok, { key: 'a' })).toBe('ok');
    expect(registry.keyedCircuitBreaker('hosts', 'a').state).toBe('closed');
  });

  it("takes each call's key from the step's key function, given the call's key", async () => {
    const registry = new Registry(breakers(1));
    const p = pipeline(
      registry.keyed('circuitBreaker', 'hosts', { key: (url) => new URL(url!).host }),
    );
    await settle(p.execute(fail, { key: 'https://a.example/x' }));
    const refused = await settle(p.execute(ok, { key: 'https://a.example/y' }));
    expect(refused.value).toBeInstanceOf(BrokenCircuitError);
    expect(await p.execute(ok, { key: 'https://b.example/x' })).toBe('ok');
    expect(registry.snapshot().instances.map((i) => i.key)).toEqual(['b.example', 'a.example']);
  });

  it('lets a key function answer without a key from the call (one kept by the application)', async () => {
    const registry = new Registry();
    let tenant = 't1';
    const p = pipeline(registry.keyed('bulkhead', 'tenants', { key: () => tenant }));
    await p.execute(ok);
    tenant = 't2';
    await p.executeSync(ok);
    expect(registry.snapshot().instances.map((i) => i.key)).toEqual(['t2', 't1']);
  });

  it('fails a call without a key with a UsageError, before running anything', async () => {
    const registry = new Registry();
    const p = pipeline(registry.keyed('circuitBreaker', 'hosts'));
    let called = 0;
    const call = () => ++called;
    const rejected = await settle(p.execute(call));
    expect(rejected.value).toBeInstanceOf(UsageError);
    expect((rejected.value as UsageError).code).toBe('ERR_BREAKWATER_USAGE');
    expect((rejected.value as Error).message).toContain('keyed circuit breaker ("hosts")');
    expect((rejected.value as Error).message).toContain('execute(fn, { key })');
    const result = await p.tryExecute(call);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toBeInstanceOf(UsageError);
    expect(!result.ok && result.rejected).toBe(false);
    expect(() => p.executeSync(call)).toThrow(UsageError);
    expect(called).toBe(0);
    expect(registry.snapshot().instances).toEqual([]);
  });

  it('fails a call whose key function answers no key, or whose key is too long, with a typed error', async () => {
    const registry = new Registry();
    const p = pipeline(
      registry.keyed('circuitBreaker', 'hosts', { key: () => undefined as unknown as string }),
    );
    const noKey = await settle(p.execute(ok, { key: 'a' }));
    expect(noKey.value).toBeInstanceOf(UsageError);
    expect((noKey.value as Error).message).toMatch(/`key` function .* got undefined/);
    const q = pipeline(registry.keyed('circuitBreaker', 'hosts'));
    const long = await settle(q.execute(ok, { key: 'x'.repeat(1025) }));
    expect(long.value).toBeInstanceOf(OptionsError);
  });

  it('gives permits back on every path, per key, and keeps a key with calls in flight from eviction', async () => {
    const registry = new Registry({
      bulkheads: { tenants: { maxConcurrent: 1 } },
      keys: { maxKeys: 1 },
    });
    const p = pipeline(registry.keyed<Bulkhead>('bulkhead', 'tenants'));
    const held = deferred<string>();
    const first = track(p.execute(() => held.promise, { key: 'a' }));
    const a = registry.keyedBulkhead('tenants', 'a');
    expect(a.inFlight).toBe(1);
    expect((await settle(p.execute(ok, { key: 'a' }))).value).toBeInstanceOf(BulkheadRejectedError);
    // `b` over the cap of one key: `a` has a call in flight, so it stays.
    expect(await p.execute(ok, { key: 'b' })).toBe('ok');
    expect((await settle(p.execute(fail, { key: 'b' }))).ok).toBe(false);
    held.resolve('done');
    await first.done;
    expect(first.value).toBe('done');
    expect(registry.keyedBulkhead('tenants', 'a')).toBe(a);
    expect(a.inFlight).toBe(0);
    expect(registry.keyedBulkhead('tenants', 'b').inFlight).toBe(0);
    expect(await p.execute(ok, { key: 'a' })).toBe('ok');
  });

  it('runs under a retry and a timeout: attempts of one call use the key it started with', async () => {
    const clock = new ManualClock();
    const registry = new Registry(breakers(5), { clock });
    const p = pipeline(
      retry({ maxAttempts: 3, delay: 10, backoff: 'constant', jitter: 'none', clock }),
      timeout({ timeout: 100, clock }),
      registry.keyed<CircuitBreaker>('circuitBreaker', 'hosts'),
    );
    let attempt = 0;
    const call = track(
      p.execute(
        (context) => {
          attempt++;
          if (attempt === 1) return untilAborted(context);
          if (attempt === 2) throw new Error('down');
          return 'third time';
        },
        { key: 'a' },
      ),
      clock,
    );
    await flushMicrotasks();
    expect(attempt).toBe(1);
    await clock.advanceAsync(100); // the first attempt times out
    await clock.advanceAsync(10); // the second fails at once
    await clock.advanceAsync(10);
    expect(call.settled).toBe(true);
    await call.done;
    expect(call.value).toBe('third time');
    expect(call.at).toBe(120);
    const a = registry.keyedCircuitBreaker('hosts', 'a').stats();
    expect([a.failures, a.successes]).toEqual([2, 1]);
    expect(registry.snapshot().instances.map((i) => i.key)).toEqual(['a']);
  });

  it('resolves several keyed steps per call, each with its own key', async () => {
    const registry = new Registry({
      ...breakers(1),
      rateLimiters: { tenants: { limit: 1, period: '1m' } },
    });
    const p = pipeline(
      registry.keyed('rateLimiter', 'tenants', { key: (key) => key!.split('/')[0]! }),
      registry.keyed('circuitBreaker', 'hosts', { key: (key) => key!.split('/')[1]! }),
    );
    expect(await p.execute(ok, { key: 't1/a.example' })).toBe('ok');
    expect((await settle(p.execute(ok, { key: 't1/b.example' }))).value).toBeInstanceOf(
      RateLimitedError,
    );
    expect((await settle(p.execute(fail, { key: 't2/b.example' }))).ok).toBe(false);
    expect((await settle(p.execute(ok, { key: 't3/b.example' }))).value).toBeInstanceOf(
      BrokenCircuitError,
    );
    expect(await p.execute(ok, { key: 't4/a.example' })).toBe('ok');
    expect(registry.keyedCircuitBreaker('hosts', 'a.example').stats().successes).toBe(2);
  });

  it('takes a kind defined outside the library, by its descriptor', async () => {
    const registry = new Registry({ concurrencyCaps: { jobs: { limit: 1 } } } as RegistryConfig, {
      kinds: [concurrencyCapKind],
    });
    const p = pipeline(registry.keyed(concurrencyCapKind, 'jobs'));
    const held = deferred();
    const first = track(p.execute(() => held.promise, { key: 'x' }));
    expect((await settle(p.execute(ok, { key: 'x' }))).ok).toBe(false);
    expect(await p.execute(ok, { key: 'y' })).toBe('ok');
    held.resolve(1);
    await first.done;
    const cap = registry.getKeyed<ConcurrencyCap>(concurrencyCapKind, 'jobs', 'x');
    expect(cap.stats()).toMatchObject({ inFlight: 0, admitted: 1, refused: 1 });
  });

  it('disposes the policies it was given, not the registry instances of its keys', async () => {
    const registry = new Registry();
    const r = retry();
    const p = pipeline(r, registry.keyed('bulkhead', 'tenants'));
    await p.execute(ok, { key: 'a' });
    const a = registry.keyedBulkhead('tenants', 'a');
    p.dispose();
    expect(registry.keyedBulkhead('tenants', 'a')).toBe(a);
    expect(await pipeline(a).execute(ok)).toBe('ok');
  });
});

describe('registry.keyed', () => {
  it('refuses a kind not kept per key, a kind the registry was not given, and bad options', () => {
    const registry = new Registry();
    expect(() => registry.keyed('retry', 'x')).toThrow(UsageError);
    expect(() => registry.keyed('concurrencyCap', 'x')).toThrow(UsageError);
    expect(() => registry.keyed('circuitBreaker', '')).toThrow(OptionsError);
    expect(() =>
      registry.keyed('circuitBreaker', 'x', { key: 'host' as unknown as () => string }),
    ).toThrow(OptionsError);
    expect(() =>
      registry.keyed('circuitBreaker', 'x', { keys: 1 } as unknown as { key: () => string }),
    ).toThrow(OptionsError);
  });

  it('fails when made, not on a call, for a name whose config cannot build an instance', () => {
    const registry = new Registry();
    expect(() => registry.keyed('rateLimiter', 'tenants')).toThrow(ConfigError);
  });

  it('cannot go into a pipeline built by new Pipeline, which never looks for keys', () => {
    const registry = new Registry();
    expect(() => new Pipeline([registry.keyed('circuitBreaker', 'hosts') as never])).toThrow(
      /policies\[0\] is a keyed step \(circuitBreaker "hosts"\)/,
    );
  });
});
