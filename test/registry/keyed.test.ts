import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CircuitBreaker,
  collectMetrics,
  pipeline,
  Registry,
  type RegistryConfig,
  type RegistryInstanceSnapshot,
  systemClock,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';

/** One synchronous call through `breaker`. */
function run(breaker: CircuitBreaker, ok: boolean): void {
  try {
    pipeline(breaker).executeSync(() => {
      if (!ok) throw new Error('down');
      return 1;
    });
  } catch {}
}

const opensAtOnce = (extra: RegistryConfig = {}): RegistryConfig => ({
  ...extra,
  circuitBreakers: {
    hosts: { window: { kind: 'consecutive', threshold: 1 }, breakDuration: '10s' },
  },
});

function keyed(registry: Registry): RegistryInstanceSnapshot[] {
  return registry.snapshot().instances.filter((i) => i.key !== undefined);
}

const keysOf = (registry: Registry) => keyed(registry).map((i) => i.key);

/** The instances the registry built for these keys, one per key, without reusing one. */
const LIVE_LIMIT = 1024;

describe('keyed instances', () => {
  it('one instance per key, the same one on every use, named after the name and the key', () => {
    const registry = new Registry();
    const a = registry.keyedCircuitBreaker('hosts', 'a.example');
    expect(registry.keyedCircuitBreaker('hosts', 'a.example')).toBe(a);
    expect(registry.keyedCircuitBreaker('hosts', 'b.example')).not.toBe(a);
    expect(registry.keyedCircuitBreaker('other', 'a.example')).not.toBe(a);
    expect(a.name).toBe('hosts:a.example');
    const q = registry.keyedBulkhead('tenants', 't1');
    expect(registry.keyedBulkhead('tenants', 't1')).toBe(q);
    expect(q.name).toBe('tenants:t1');
  });

  it('are built from the config of their name', () => {
    const registry = new Registry({
      defaults: { bulkhead: { maxConcurrent: 3 } },
      bulkheads: { tenants: { maxConcurrent: 7 } },
    });
    expect(registry.keyedBulkhead('tenants', 't').maxConcurrent).toBe(7);
    expect(registry.keyedBulkhead('others', 't').maxConcurrent).toBe(3);
  });

  it('keep keys of one name apart from the named instance of that name', () => {
    const registry = new Registry();
    const named = registry.circuitBreaker('hosts');
    named.trip();
    expect(registry.keyedCircuitBreaker('hosts', 'a').state).toBe('closed');
  });
});

describe('the time of a use', () => {
  it('is read from a clock that is costly to read at most once per 64 uses of keys', () => {
    let reads = 0;
    const clock = {
      ...systemClock,
      now: () => {
        reads++;
        return systemClock.now();
      },
    };
    const registry = new Registry({}, { clock });
    registry.keyedCircuitBreaker('hosts', 'a');
    reads = 0;
    for (let i = 0; i < 6_400; i++) registry.keyedCircuitBreaker('hosts', i % 2 ? 'a' : 'b');
    expect(reads).toBeLessThanOrEqual(101);
  });
});

describe('the key cap', () => {
  it('evicts the least recently used key when a new one would pass the cap', () => {
    const registry = new Registry({ keys: { maxKeys: 3 } });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    registry.keyedCircuitBreaker('hosts', 'b');
    registry.keyedCircuitBreaker('hosts', 'c');
    expect(registry.keyedCircuitBreaker('hosts', 'a')).toBe(a);
    registry.keyedCircuitBreaker('hosts', 'd');
    expect(keysOf(registry)).toEqual(['d', 'a', 'c']);
    expect(registry.keyedCircuitBreaker('hosts', 'a')).toBe(a);
  });

  it('disposes what it evicts: listeners of an evicted breaker and bulkhead are removed', () => {
    const registry = new Registry({ keys: { maxKeys: 1 } });
    const breaker = registry.keyedCircuitBreaker('hosts', 'a');
    let changes = 0;
    breaker.onStateChange(() => changes++);
    const bulkhead = registry.keyedBulkhead('tenants', 'a');
    let refusals = 0;
    bulkhead.onRejected(() => refusals++);

    registry.keyedCircuitBreaker('hosts', 'b');
    registry.keyedBulkhead('tenants', 'b');

    breaker.trip();
    expect(changes).toBe(0);
    expect(registry.keyedCircuitBreaker('hosts', 'a')).not.toBe(breaker);
    // A listener still attached would see this refusal.
    bulkhead.reconfigure({ maxConcurrent: 1 });
    const gate = deferred();
    const p = pipeline(bulkhead);
    void p.execute(() => gate.promise);
    void p.execute(() => 1).catch(() => {});
    expect(refusals).toBe(0);
    gate.resolve(0);
  });

  it('never evicts an open or half-open breaker; the cap is exceeded only while every candidate is protected', () => {
    const clock = new ManualClock();
    const registry = new Registry(opensAtOnce({ keys: { maxKeys: 2 } }), { clock });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    run(a, false);
    const b = registry.keyedCircuitBreaker('hosts', 'b');
    run(b, false);
    expect([a.state, b.state]).toEqual(['open', 'open']);
    const c = registry.keyedCircuitBreaker('hosts', 'c');
    // Over the cap: a and b were the only candidates and both are open.
    expect(keysOf(registry)).toEqual(['c', 'b', 'a']);
    clock.advance(10_000);
    expect(a.state).toBe('half-open');
    registry.keyedCircuitBreaker('hosts', 'd');
    // c was evictable, so the cap holds again (d replaced c; the half-open ones stay).
    expect(keysOf(registry).sort()).toEqual(['a', 'b', 'd']);
    expect(registry.keyedCircuitBreaker('hosts', 'a')).toBe(a);
    run(a, true);
    expect(a.state).toBe('closed');
    registry.keyedCircuitBreaker('hosts', 'b');
    // With a closed, the next use gets back under the cap, evicting the least recently used
    // of the evictable keys (d, used before a).
    expect(keysOf(registry)).toEqual(['b', 'a']);
    expect(registry.keyedCircuitBreaker('hosts', 'c')).not.toBe(c);
  });

  it('keeps breakers held in a state by hand: forced open, disabled, metrics-only', () => {
    const registry = new Registry({ keys: { maxKeys: 1 } });
    const forced = registry.keyedCircuitBreaker('hosts', 'forced');
    forced.isolate();
    const disabled = registry.keyedCircuitBreaker('hosts', 'disabled');
    disabled.disable();
    const metrics = registry.keyedCircuitBreaker('hosts', 'metrics');
    metrics.metricsOnly();
    registry.keyedCircuitBreaker('hosts', 'plain');
    expect(keysOf(registry).sort()).toEqual(['disabled', 'forced', 'metrics', 'plain']);
    expect(registry.keyedCircuitBreaker('hosts', 'forced')).toBe(forced);
  });

  it('never evicts a bulkhead with calls in flight or queued', async () => {
    const registry = new Registry({
      keys: { maxKeys: 1 },
      bulkheads: { tenants: { maxConcurrent: 1, maxQueue: 1 } },
    });
    const busy = registry.keyedBulkhead('tenants', 'busy');
    const gate = deferred();
    const p = pipeline(busy);
    const running = p.execute(() => gate.promise);
    const queued = p.execute(() => 'queued');
    registry.keyedBulkhead('tenants', 'other');
    registry.keyedBulkhead('tenants', 'third');
    expect(keysOf(registry)).toContain('busy');
    expect(registry.keyedBulkhead('tenants', 'busy')).toBe(busy);
    gate.resolve(1);
    await running;
    await expect(queued).resolves.toBe('queued');
    registry.keyedBulkhead('tenants', 'fourth');
    expect(keysOf(registry)).toEqual(['fourth']);
  });

  it('a listener that uses the registry while keys are looked at leaves it consistent', () => {
    const clock = new ManualClock();
    const registry = new Registry(opensAtOnce({ keys: { maxKeys: 2 } }), { clock });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    const seen: string[] = [];
    // Reading a's state for eviction moves it to half-open, which runs this listener.
    a.onStateChange((e) => {
      seen.push(e.to);
      registry.keyedCircuitBreaker('hosts', `from-listener-${seen.length}`);
    });
    run(a, false);
    registry.keyedCircuitBreaker('hosts', 'b');
    clock.advance(10_000);
    registry.keyedCircuitBreaker('hosts', 'c');
    expect(seen).toEqual(['open', 'half-open']);
    const keys = keysOf(registry);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain('a');
    expect(registry.keyedCircuitBreaker('hosts', 'a')).toBe(a);
    registry.keyedCircuitBreaker('hosts', 'd');
    expect(keyed(registry).length).toBeLessThanOrEqual(3);
  });

  it('keeps no more than hardMaxKeys (default 2 × maxKeys) when every key fails: the least recently used open breakers go', () => {
    const registry = new Registry(opensAtOnce({ keys: { maxKeys: 100 } }));
    const first = registry.keyedCircuitBreaker('hosts', 'k0');
    run(first, false);
    for (let i = 1; i < 5_000; i++) run(registry.keyedCircuitBreaker('hosts', `k${i}`), false);
    const held = keyed(registry);
    expect(held).toHaveLength(200);
    expect(held.every((e) => e.kind === 'circuitBreaker' && e.state === 'open')).toBe(true);
    // The most recent keys are kept; the oldest went, their counts kept in _other.
    expect(keysOf(registry)).toContain('k4999');
    expect(keysOf(registry)).not.toContain('k0');
    expect(registry.keyedCircuitBreaker('hosts', 'k0')).not.toBe(first);
  });

  it('takes the ceiling from keys.hardMaxKeys, at least maxKeys', () => {
    const registry = new Registry(opensAtOnce({ keys: { maxKeys: 10, hardMaxKeys: 15 } }));
    for (let i = 0; i < 1_000; i++) run(registry.keyedCircuitBreaker('hosts', `k${i}`), false);
    expect(keyed(registry)).toHaveLength(15);
    expect(() => new Registry({ keys: { maxKeys: 10, hardMaxKeys: 5 } })).toThrow(/hardMaxKeys/);
  });

  it('looks at the 64 least recently used keys per use; the excess goes on later uses', () => {
    const registry = new Registry(opensAtOnce({ keys: { maxKeys: 66 } }));
    for (let i = 0; i < 65; i++) run(registry.keyedCircuitBreaker('hosts', `open${i}`), false);
    registry.keyedCircuitBreaker('hosts', 'closed');
    registry.keyedCircuitBreaker('hosts', 'new');
    // 64 open keys were looked at, all protected: the closed key beyond them was not reached.
    expect(keyed(registry)).toHaveLength(67);
    expect(keysOf(registry)).toContain('closed');
    registry.keyedCircuitBreaker('hosts', 'new');
    expect(keyed(registry)).toHaveLength(66);
    expect(keysOf(registry)).not.toContain('closed');
  });

  it('property: open breakers, and half-open ones whose break ended less than the idle timeout ago, are never evicted, and the cap is exceeded only while all other keys are protected', () => {
    type Op =
      | { op: 'use' | 'fail' | 'succeed' | 'reset'; key: number }
      | { op: 'advance'; ms: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constantFrom('use', 'fail', 'succeed', 'reset'), key: fc.nat(9) }),
      fc.record({ op: fc.constant('advance'), ms: fc.integer({ min: 1, max: 400 }) }),
    ) as fc.Arbitrary<Op>;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 50, max: 1_000 }),
        fc.array(opArb, { maxLength: 60 }),
        (maxKeys, idleTimeout, ops) => {
          const clock = new ManualClock();
          const registry = new Registry(
            {
              // Above the ten keys used: below the ceiling nothing protected goes.
              keys: { maxKeys, idleTimeout, hardMaxKeys: 10 },
              circuitBreakers: {
                hosts: {
                  window: { kind: 'consecutive', threshold: 1 },
                  breakDuration: 300,
                  halfOpen: { maxWait: 200 },
                },
              },
            },
            { clock },
          );
          const held = new Map<string, CircuitBreaker>();
          /** When the test last saw each key's breaker open: its break ended later. */
          const seenOpen = new Map<string, number>();
          const isProtected = (state: string) => state === 'open' || state === 'half-open';
          for (const step of ops) {
            let used: string | undefined;
            if (step.op === 'advance') clock.advance(step.ms);
            else {
              used = `k${step.key}`;
              const breaker = registry.keyedCircuitBreaker('hosts', used);
              const before = held.get(used);
              // A key is rebuilt only when it was evicted, which needs it unprotected: never
              // open (calls are synchronous here, so a half-open one had no call since).
              if (before !== undefined && before !== breaker) {
                expect(before.state).not.toBe('open');
              }
              held.set(used, breaker);
              if (step.op === 'fail') run(breaker, false);
              else if (step.op === 'succeed') run(breaker, true);
              else if (step.op === 'reset') breaker.reset();
            }
            expect(clock.pendingTimers).toBe(0);
            const entries = keyed(registry);
            const byKey = new Map(entries.map((e) => [e.key!, e]));
            for (const [key, breaker] of held) {
              const state = breaker.state;
              const mustKeep =
                state === 'open' ||
                (state === 'half-open' && clock.now() - seenOpen.get(key)! < idleTimeout);
              if (state === 'open') seenOpen.set(key, clock.now());
              if (!mustKeep) continue;
              const entry = byKey.get(key);
              expect(entry, `${key} is ${breaker.state} and must be kept`).toBeDefined();
              expect(entry).toMatchObject({ state: breaker.state });
              expect(entry!.kind === 'circuitBreaker' && entry!.stats.generation).toBe(
                breaker.generation,
              );
            }
            // A use gets back under the cap unless the other keys are all protected.
            if (used !== undefined && entries.length > maxKeys) {
              const others = entries.filter((e) => e.key !== used);
              for (const e of others) {
                expect(
                  e.kind === 'circuitBreaker' && isProtected(e.state),
                  `over the cap (${entries.length} > ${maxKeys}) with ${e.key} evictable`,
                ).toBe(true);
              }
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('idle keys', () => {
  it('are dropped once unused for the idle timeout, without any timer', () => {
    const clock = new ManualClock();
    const registry = new Registry({ keys: { idleTimeout: '1s' } }, { clock });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    let changes = 0;
    a.onStateChange(() => changes++);
    registry.keyedCircuitBreaker('hosts', 'b');
    registry.keyedBulkhead('tenants', 't');
    expect(clock.pendingTimers).toBe(0);
    clock.advance(500);
    registry.keyedCircuitBreaker('hosts', 'b');
    clock.advance(499);
    expect(keysOf(registry)).toEqual(['b', 'a', 't']);
    clock.advance(1);
    // a reached its idle timeout; b was used 500 ms later.
    registry.keyedCircuitBreaker('hosts', 'c');
    expect(keysOf(registry)).toEqual(['c', 'b']);
    expect(clock.pendingTimers).toBe(0);
    a.trip();
    expect(changes).toBe(0);
    expect(registry.keyedCircuitBreaker('hosts', 'a')).not.toBe(a);
  });

  it('a key used after its idle timeout gets a fresh instance even before any sweep reached it', () => {
    const clock = new ManualClock();
    const registry = new Registry(opensAtOnce({ keys: { idleTimeout: 100 } }), { clock });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    a.trip();
    a.reset();
    run(a, true);
    clock.advance(100);
    const again = registry.keyedCircuitBreaker('hosts', 'a');
    expect(again).not.toBe(a);
    expect(again.stats().successes).toBe(0);
  });

  it('protected ones stay, counted as used when met, and go once they are evictable', () => {
    const clock = new ManualClock();
    const registry = new Registry(opensAtOnce({ keys: { idleTimeout: 100 } }), { clock });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    run(a, false);
    clock.advance(150);
    expect(keysOf(registry)).toEqual(['a']);
    expect(registry.keyedCircuitBreaker('hosts', 'a')).toBe(a);
    a.reset();
    clock.advance(100);
    expect(keysOf(registry)).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('"Infinity" keeps keys until the cap evicts them', () => {
    const clock = new ManualClock();
    const registry = new Registry({ keys: { idleTimeout: 'Infinity' } }, { clock });
    registry.keyedBulkhead('tenants', 'a');
    clock.advance(2_147_483_647);
    expect(keysOf(registry)).toEqual(['a']);
  });
});

describe('keys whose breaker opened', () => {
  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;

  it('1,000 keys that failed once and were never called again: 24 h later at most maxKeys (100) are held, and keys in use keep their breakers', () => {
    const clock = new ManualClock();
    // The ceiling above the 1,000 keys: here they go by the idle timeout alone.
    const keys = { maxKeys: 100, hardMaxKeys: 1_000 };
    const registry = new Registry(opensAtOnce({ keys }), { clock });
    for (let i = 0; i < 1_000; i++) run(registry.keyedCircuitBreaker('hosts', `down${i}`), false);
    const healthy = Array.from({ length: 50 }, (_, i) => `up${i}`);
    const useHealthy = (hours: number) => {
      for (let t = 0; t < hours * HOUR; t += 5 * MINUTE) {
        clock.advance(5 * MINUTE);
        for (const key of healthy) run(registry.keyedCircuitBreaker('hosts', key), true);
      }
    };
    // While the failing keys' breaks run and for the idle timeout after, they are protected
    // and the key cap is exceeded; then they go.
    useHealthy(1);
    expect(keysOf(registry).sort()).toEqual([...healthy].sort());
    const kept = healthy.map((key) => registry.keyedCircuitBreaker('hosts', key));
    useHealthy(23);
    expect(keysOf(registry).sort()).toEqual([...healthy].sort());
    healthy.forEach((key, i) => {
      expect(registry.keyedCircuitBreaker('hosts', key)).toBe(kept[i]);
    });
    // Each failing key reported its opening and the end of its break, nothing more.
    const transitions = collectMetrics(registry)
      .find((f) => f.name === 'breakwater_circuit_breaker_transitions_total')!
      .samples.reduce((sum, s) => sum + ('value' in s ? s.value : 0), 0);
    expect(transitions).toBe(2_000);
  });

  it('with no other traffic, reading the snapshot 24 h later finds none of them', () => {
    const clock = new ManualClock();
    // The ceiling above the 1,000 keys: here they go by the idle timeout alone.
    const keys = { maxKeys: 100, hardMaxKeys: 1_000 };
    const registry = new Registry(opensAtOnce({ keys }), { clock });
    for (let i = 0; i < 1_000; i++) run(registry.keyedCircuitBreaker('hosts', `down${i}`), false);
    expect(keyed(registry)).toHaveLength(1_000);
    clock.advance(24 * HOUR);
    expect(keyed(registry)).toHaveLength(0);
  });

  it('a breaker refusing calls that keep coming is never dropped nor rebuilt, however long and whatever the churn', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        keys: { maxKeys: 2, idleTimeout: '1m' },
        circuitBreakers: {
          hosts: { window: { kind: 'consecutive', threshold: 1 }, breakDuration: '10m' },
        },
      },
      { clock },
    );
    const down = registry.keyedCircuitBreaker('hosts', 'down');
    run(down, false);
    let other = 0;
    for (let t = 0; t < 6 * HOUR; t += 10_000) {
      clock.advance(10_000);
      run(registry.keyedCircuitBreaker('hosts', `other${other++}`), true);
      // Every 2 minutes a call for the failing host: refused, or a probe that fails again.
      if (t % (2 * MINUTE) === 0) run(registry.keyedCircuitBreaker('hosts', 'down'), false);
      expect(keysOf(registry)).toContain('down');
    }
    expect(registry.keyedCircuitBreaker('hosts', 'down')).toBe(down);
    expect(down.state).toBe('open');
    // 180 calls over 6 h: a failing probe every 10 min (35), the others refused; the first
    // failure opened it, and each probe moved it to half-open and back.
    expect(down.stats()).toMatchObject({ failures: 36, rejections: 145, transitions: 71 });
  });

  it('an open breaker nobody calls is kept while its break runs, past the idle timeout; it goes once its break is over and it stayed unused', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        keys: { maxKeys: 1, idleTimeout: '1m' },
        circuitBreakers: {
          hosts: { window: { kind: 'consecutive', threshold: 1 }, breakDuration: '10m' },
        },
      },
      { clock },
    );
    const down = registry.keyedCircuitBreaker('hosts', 'down');
    run(down, false);
    for (let i = 0; i < 59; i++) {
      clock.advance(10_000);
      registry.keyedCircuitBreaker('hosts', `other${i}`);
    }
    expect(keysOf(registry)).toContain('down');
    expect(down.state).toBe('open');
    clock.advance(10_000 + MINUTE); // break over at 10 min, then unused for the idle timeout
    registry.keyedCircuitBreaker('hosts', 'new');
    expect(keysOf(registry)).toEqual(['new']);
    expect(registry.keyedCircuitBreaker('hosts', 'down')).not.toBe(down);
  });

  it('a half-open breaker with a probe in flight is kept, however long the probe takes', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        keys: { maxKeys: 1, idleTimeout: '1m' },
        circuitBreakers: {
          hosts: {
            window: { kind: 'consecutive', threshold: 1 },
            breakDuration: '10s',
            halfOpen: { maxWait: '1h' },
          },
        },
      },
      { clock },
    );
    const down = registry.keyedCircuitBreaker('hosts', 'down');
    run(down, false);
    clock.advance(10_000);
    const probe = deferred();
    const call = pipeline(down).execute(() => probe.promise);
    clock.advance(30 * MINUTE);
    registry.keyedCircuitBreaker('hosts', 'other');
    expect(keysOf(registry)).toContain('down');
    expect(down.state).toBe('half-open');
    probe.resolve('back');
    await expect(call).resolves.toBe('back');
    expect(down.state).toBe('closed');
    expect(registry.keyedCircuitBreaker('hosts', 'down')).toBe(down);
  });
});

describe('shelved keys', () => {
  /** Uses enough other keys that `key`'s instance is no longer among the live ones. */
  function crowdOut(registry: Registry, kind: 'breaker' | 'bulkhead'): void {
    for (let i = 0; i < LIVE_LIMIT + 10; i++) {
      if (kind === 'breaker') run(registry.keyedCircuitBreaker('hosts', `other${i}`), true);
      else registry.keyedBulkhead('tenants', `other${i}`);
    }
  }

  it('an idle closed breaker is rebuilt with the same counts and window after being shelved (its transitions go to the name total)', () => {
    const registry = new Registry({
      circuitBreakers: { hosts: { window: { kind: 'count', size: 4 } } },
    });
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    a.trip();
    a.reset();
    for (let i = 0; i < 3; i++) run(a, true);
    const { timeInState: _, transitions, transitionsTo, ...before } = a.stats();
    expect(transitions).toBe(2);
    crowdOut(registry, 'breaker');
    const entry = keyed(registry).find((e) => e.key === 'a');
    expect(entry).toMatchObject({ state: 'closed', stats: { ...before, transitions: 0 } });
    const rebuilt = registry.keyedCircuitBreaker('hosts', 'a');
    expect(rebuilt).not.toBe(a);
    expect(rebuilt.stats()).toMatchObject({ ...before, transitions: 0 });
    const other = (to: string) =>
      collectMetrics(registry)
        .find((f) => f.name === 'breakwater_circuit_breaker_transitions_total')!
        .samples.find((s) => 'labels' in s && s.labels.key === '_other' && s.labels.to === to);
    expect(other('open')).toMatchObject({ value: transitionsTo.open });
    expect(other('closed')).toMatchObject({ value: transitionsTo.closed });
    // The three successes are still in the window: one failure in four calls is 25 %.
    run(rebuilt, false);
    expect(rebuilt.stats()).toMatchObject({ callsInWindow: 4, failuresInWindow: 1 });
    expect(rebuilt.state).toBe('closed');
  });

  it('a breaker with a failure in its window, or with a listener, is never shelved', () => {
    const registry = new Registry();
    const failed = registry.keyedCircuitBreaker('hosts', 'failed');
    run(failed, false);
    const watched = registry.keyedCircuitBreaker('hosts', 'watched');
    watched.onSuccess(() => {});
    crowdOut(registry, 'breaker');
    expect(registry.keyedCircuitBreaker('hosts', 'failed')).toBe(failed);
    expect(registry.keyedCircuitBreaker('hosts', 'watched')).toBe(watched);
  });

  it('the outcome of a call still in flight on a shelved breaker reaches the key current breaker', async () => {
    const registry = new Registry(opensAtOnce());
    const a = registry.keyedCircuitBreaker('hosts', 'a');
    const gate = deferred();
    const call = pipeline(a).execute(() => gate.promise);
    crowdOut(registry, 'breaker');
    gate.reject(new Error('down'));
    await expect(call).rejects.toThrow('down');
    await flushMicrotasks();
    const current = registry.keyedCircuitBreaker('hosts', 'a');
    expect(current).not.toBe(a);
    expect(current.state).toBe('open');
    expect(current.stats().failures).toBe(1);
  });

  it('an idle bulkhead is rebuilt on its next use; a busy one is kept', async () => {
    const registry = new Registry({ bulkheads: { tenants: { maxConcurrent: 1 } } });
    const idle = registry.keyedBulkhead('tenants', 'idle');
    const busy = registry.keyedBulkhead('tenants', 'busy');
    const gate = deferred();
    const running = pipeline(busy).execute(() => gate.promise);
    crowdOut(registry, 'bulkhead');
    expect(registry.keyedBulkhead('tenants', 'idle')).not.toBe(idle);
    expect(registry.keyedBulkhead('tenants', 'busy')).toBe(busy);
    gate.resolve(1);
    await running;
  });

  it('shelved keys count toward the cap and age like live ones', () => {
    const clock = new ManualClock();
    const registry = new Registry({ keys: { maxKeys: 2_000, idleTimeout: 1_000 } }, { clock });
    crowdOut(registry, 'breaker');
    expect(keyed(registry)).toHaveLength(LIVE_LIMIT + 10);
    clock.advance(1_000);
    expect(keyed(registry)).toHaveLength(0);
  });
});

describe('key index', () => {
  it('keeps keys that name object internals or array indexes apart, and forgets them on eviction', () => {
    const clock = new ManualClock();
    const registry = new Registry({ keys: { maxKeys: 1_000 } }, { clock });
    const keys = [
      '__proto__',
      'constructor',
      'hasOwnProperty',
      'toString',
      '0',
      '4294967295',
      '1e3',
      '-1',
      '',
    ];
    const made = keys.map((k) => registry.keyedCircuitBreaker('hosts', k));
    expect(new Set(made).size).toBe(keys.length);
    keys.forEach((k, i) => {
      expect(registry.keyedCircuitBreaker('hosts', k)).toBe(made[i]);
    });
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
    registry.keyedCircuitBreaker('hosts', '__proto__').trip();
    registry.reconfigure({ keys: { maxKeys: 1 } });
    // Only the open breaker is protected from eviction.
    expect(keyed(registry).map((e) => e.key)).toEqual(['__proto__']);
    expect(registry.keyedCircuitBreaker('hosts', 'constructor')).not.toBe(made[1]);
  });
});
