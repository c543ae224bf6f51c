/**
 * Rate limiters in a registry: config data, named and keyed instances, snapshot, reconfigure
 * and dispose.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  OptionsError,
  pipeline,
  RateLimitedError,
  RateLimiter,
  Registry,
  type RegistryConfig,
  type RegistryInstanceSnapshot,
  UsageError,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { track } from '../support/async.js';
import { issuesOf, issuesOrNone, resolved, thrownIssues } from '../support/config.js';
import { optionsErrorOrNone } from '../support/errors.js';

type LimiterEntry = Extract<RegistryInstanceSnapshot, { kind: 'rateLimiter' }>;

function keyedLimiters(registry: Registry): LimiterEntry[] {
  return registry
    .snapshot()
    .instances.filter((i): i is LimiterEntry => i.kind === 'rateLimiter' && i.key !== undefined);
}

const keysOf = (registry: Registry) => keyedLimiters(registry).map((i) => i.key);

/** Not back to idle: permits taken that are not free again, or callers waiting. */
const busy = (s: { available: number; burst: number; waiting: number }) =>
  s.available < s.burst || s.waiting !== 0;

const LIVE_LIMIT = 1024;

describe('config data', () => {
  it('an entry takes the defaults and changes only its own fields; durations take units', () => {
    const registry = new Registry({
      defaults: { rateLimiter: { period: '1m', maxWait: '500ms', permits: 2 } },
      rateLimiters: { api: { limit: 60 }, search: { limit: 10, period: '1.5s', burst: 4 } },
    });
    const api = registry.rateLimiter('api');
    expect(api.interval).toBe(1_000);
    expect(api.burst).toBe(60);
    expect(api.mayWait).toBe(true);
    expect(resolved(api)).toMatchObject({ maxWait: 500, permits: 2, name: 'api' });
    const search = registry.rateLimiter('search');
    expect(search.interval).toBe(150);
    expect(search.burst).toBe(4);
  });

  it('takes the token bucket form', () => {
    const registry = new Registry({ rateLimiters: { bucket: { capacity: 20, refillRate: 5 } } });
    const bucket = registry.rateLimiter('bucket');
    expect(bucket.burst).toBe(20);
    expect(bucket.interval).toBe(200);
  });

  it('a rate in the other form than the defaults replaces the default rate instead of mixing with it', () => {
    const registry = new Registry({
      defaults: { rateLimiter: { limit: 100, period: '1m', burst: 10, maxWait: 100 } },
      rateLimiters: { bucket: { capacity: 5, refillRate: 1 } },
    });
    const bucket = registry.rateLimiter('bucket');
    expect([bucket.burst, bucket.interval, bucket.mayWait]).toEqual([5, 1_000, true]);
    // Half a bucket does not take the default limit as its capacity.
    expect(
      issuesOf({
        defaults: { rateLimiter: { limit: 100 } },
        rateLimiters: { refill: { refillRate: 2 } },
      }),
    ).toEqual([
      {
        path: 'rateLimiters.refill.capacity',
        message: expect.stringMatching(/^is required with `refillRate`/),
      },
    ]);

    const reverse = new Registry({
      defaults: { rateLimiter: { capacity: 5, refillRate: 1 } },
      rateLimiters: { counted: { limit: 10 } },
    });
    const counted = reverse.rateLimiter('counted');
    expect([counted.burst, counted.interval]).toEqual([10, 100]);
  });

  it('a default bucket with only the refill rate is completed by the capacity of an entry', () => {
    const registry = new Registry({
      defaults: { rateLimiter: { refillRate: 4 } },
      rateLimiters: { a: { capacity: 8 } },
    });
    expect([registry.rateLimiter('a').burst, registry.rateLimiter('a').interval]).toEqual([8, 250]);
  });

  it('reports an entry that mixes both forms, by itself or with the default rate', () => {
    expect(
      issuesOf({
        defaults: { rateLimiter: { capacity: 5, refillRate: 1 } },
        rateLimiters: { both: { limit: 10, capacity: 5 }, slower: { period: '1m' } },
      }),
    ).toEqual([
      {
        path: 'rateLimiters.both.limit',
        message:
          'expected not set together with capacity/refillRate (a rate is either limit/period/burst or a token bucket), got 10',
      },
      {
        path: 'rateLimiters.slower.period',
        message: expect.stringMatching(
          /^expected not set together with capacity\/refillRate .*, got "1m"$/,
        ),
      },
    ]);
  });

  it('an entry without a rate in it or in the defaults is reported when the config is read', () => {
    expect(
      issuesOf({
        rateLimiters: { none: { maxWait: 5 }, half: { capacity: 5 }, other: { refillRate: 5 } },
      }),
    ).toEqual([
      {
        path: 'rateLimiters.none.limit',
        message:
          'is required (a rate: `limit`, or `capacity` and `refillRate`): neither this entry nor `defaults.rateLimiter` sets it',
      },
      {
        path: 'rateLimiters.half.refillRate',
        message: expect.stringMatching(/^is required with `capacity`/),
      },
      {
        path: 'rateLimiters.other.capacity',
        message: expect.stringMatching(/^is required with `refillRate`/),
      },
    ]);
  });

  it('a name with no rate in an entry or the defaults is a ConfigError naming it, for named and keyed alike', () => {
    const registry = new Registry({ rateLimiters: { known: { limit: 5 } } });
    expect(registry.rateLimiter('known').burst).toBe(5);
    expect(thrownIssues(() => registry.rateLimiter('unknown'))).toEqual([
      { path: 'rateLimiters.unknown.limit', message: expect.stringMatching(/^is required/) },
    ]);
    expect(thrownIssues(() => registry.keyedRateLimiter('clients', 'c1'))).toEqual([
      { path: 'rateLimiters.clients.limit', message: expect.stringMatching(/^is required/) },
    ]);
    expect(registry.snapshot().instances).toHaveLength(1);
    const withDefault = new Registry({ defaults: { rateLimiter: { limit: 7 } } });
    expect(withDefault.rateLimiter('any').burst).toBe(7);
    expect(withDefault.keyedRateLimiter('clients', 'c1').burst).toBe(7);
  });

  it('defaults without a rate have their other fields checked, against nothing but what is given', () => {
    expect(
      issuesOf({ defaults: { rateLimiter: { maxWait: '1 s', period: -1, permits: 0 } } }).map(
        (i) => i.path,
      ),
    ).toEqual([
      'defaults.rateLimiter.maxWait',
      'defaults.rateLimiter.period',
      'defaults.rateLimiter.permits',
    ]);
    expect(issuesOf({ defaults: { rateLimiter: { burst: 3, permits: 5 } } })).toEqual([
      { path: 'defaults.rateLimiter.permits', message: 'expected an integer in [1, 3], got 5' },
    ]);
    // Any rate could come with these: they are checked once an entry gives one.
    expect(
      () => new Registry({ defaults: { rateLimiter: { permits: 50, period: '1h' } } }),
    ).not.toThrow();
    expect(
      () => new Registry({ defaults: { rateLimiter: { capacity: 1_000_000 } } }),
    ).not.toThrow();
  });

  it('reports a value from the defaults that an entry makes invalid where it matters', () => {
    expect(
      issuesOf({
        defaults: { rateLimiter: { permits: 50 } },
        rateLimiters: { small: { limit: 10 } },
      }),
    ).toEqual([
      {
        path: 'rateLimiters.small.permits',
        message: 'expected an integer in [1, 10], got 50 (from `defaults.rateLimiter.permits`)',
      },
    ]);
  });

  it('words duration problems with the duration hint and the value as written', () => {
    const byPath = new Map(
      issuesOf({
        rateLimiters: {
          a: { limit: 1, period: '5 s', maxWait: '600h' },
          b: { limit: 1, maxWait: -1 },
        },
      }).map((i) => [i.path, i.message]),
    );
    expect(byPath.get('rateLimiters.a.period')).toMatch(/^expected a duration.*got "5 s"$/);
    expect(byPath.get('rateLimiters.a.maxWait')).toBe(
      'expected a number of ms in [0, 2147483647] (or a string like "30s"), got "600h"',
    );
    expect(byPath.get('rateLimiters.b.maxWait')).toBe(
      'expected a number of ms in [0, 2147483647] (or a string like "30s"), got -1',
    );
  });

  it('keeps checking the other fields of an entry whose rate is invalid', () => {
    expect(
      issuesOf({ rateLimiters: { a: { limit: 0, maxWait: -1, debug: 'yes' } } }).map((i) => i.path),
    ).toEqual(['rateLimiters.a.limit', 'rateLimiters.a.maxWait', 'rateLimiters.a.debug']);
  });

  it('does not report a range that depends on an option already reported', () => {
    // With the period invalid, the limit's range (at most one call per µs) says nothing new.
    expect(
      issuesOf({ rateLimiters: { a: { limit: 2_000_000, period: -1 } } }).map((i) => i.path),
    ).toEqual(['rateLimiters.a.period']);
    // The burst given bounds the permits whatever the limit.
    expect(
      issuesOf({ rateLimiters: { a: { limit: -1, burst: 3, permits: 5 } } }).map((i) => i.path),
    ).toEqual(['rateLimiters.a.limit', 'rateLimiters.a.permits']);
  });

  it('names the closest valid key for a misspelt one, at every level', () => {
    expect(
      issuesOf({
        rateLimiter: {},
        defaults: { ratelimiters: {} },
        rateLimiters: { a: { limt: 5, refilRate: 1, maxwait: '1s' } },
      }),
    ).toEqual([
      { path: 'rateLimiter', message: 'is not a known key (did you mean `rateLimiters`?)' },
      {
        path: 'defaults.ratelimiters',
        message: 'is not a known policy kind (did you mean `rateLimiter`?)',
      },
      { path: 'rateLimiters.a.limt', message: 'is not a known option (did you mean `limit`?)' },
      {
        path: 'rateLimiters.a.refilRate',
        message: 'is not a known option (did you mean `refillRate`?)',
      },
      {
        path: 'rateLimiters.a.maxwait',
        message: 'is not a known option (did you mean `maxWait`?)',
      },
      {
        path: 'rateLimiters.a.limit',
        message: expect.stringMatching(/^is required/),
      },
    ]);
  });

  it('lists the known options when nothing is close, and explains that clocks and names cannot come from data', () => {
    expect(
      issuesOf({ rateLimiters: { a: { limit: 1, tokensPerSecond: 3, clock: 1, name: 'b' } } }),
    ).toEqual([
      {
        path: 'rateLimiters.a.tokensPerSecond',
        message:
          'is not a known option; known options are `limit`, `period`, `burst`, `capacity`, `refillRate`, `permits`, `maxWait`, `debug`',
      },
      { path: 'rateLimiters.a.clock', message: expect.stringMatching(/^cannot be set in config/) },
      {
        path: 'rateLimiters.a.name',
        message: expect.stringContaining('the name is the key of the entry'),
      },
    ]);
  });

  it('rejects an empty instance name and a section that is not an object', () => {
    expect(issuesOf({ rateLimiters: { '': { limit: 1 } } })).toEqual([
      { path: 'rateLimiters[""]', message: 'an instance name must not be empty' },
    ]);
    expect(issuesOf({ rateLimiters: { a: 5 } })).toEqual([
      { path: 'rateLimiters.a', message: 'expected an object, got 5' },
    ]);
  });

  it.each(['__proto__', 'constructor', 'prototype'])(
    'a %s key is rejected in every rate limiter section and no prototype changes',
    (key) => {
      const p = `"${key}": {"polluted": 1, "limit": 1}`;
      for (const [path, text] of [
        ['defaults.rateLimiter', `{"defaults": {"rateLimiter": {${p}}}}`],
        ['rateLimiters', `{"rateLimiters": {${p}}}`],
        ['rateLimiters.a', `{"rateLimiters": {"a": {"limit": 5, ${p}}}}`],
      ] as const) {
        expect(issuesOf(JSON.parse(text))).toEqual([
          {
            path: `${path}.${key}`,
            message: expect.stringContaining('could change object prototypes'),
          },
        ]);
        expect(({} as Record<string, unknown>).polluted).toBe(undefined);
        expect(({} as Record<string, unknown>).limit).toBe(undefined);
      }
    },
  );
});

describe('limits are the rate limiter own', () => {
  const anyNumber = fc.oneof(
    fc.double({ noNaN: false }),
    fc.integer({ min: -5, max: 2_147_483_650 }),
    fc.constantFrom(0, 1, -1, 0.5, 1.5, 1e-9, 1e6, 1e6 + 1, 2_147_483_647, 2_147_483_648),
  );
  // Strings are durations in data (duration.test.ts), so duration fields get no strings here.
  const anyValue = fc.oneof(anyNumber, fc.constantFrom('fast', '5', true, null));

  const cases: [string, Record<string, unknown>, boolean][] = [
    ['limit', {}, false],
    ['period', { limit: 10 }, true],
    ['burst', { limit: 10 }, false],
    ['permits', { limit: 10 }, false],
    ['maxWait', { limit: 10 }, true],
    ['capacity', { refillRate: 5 }, false],
    ['refillRate', { capacity: 5 }, false],
  ];

  it.each(cases)(
    'rateLimiters.x.%s is accepted from data exactly when the limiter accepts it in code',
    (field, base, isDuration) => {
      fc.assert(
        fc.property(
          isDuration ? fc.oneof(anyNumber, fc.constantFrom(true, null)) : anyValue,
          (value) => {
            const own = optionsErrorOrNone(() => new RateLimiter({ ...base, [field]: value }));
            const issues = issuesOrNone({ rateLimiters: { x: { ...base, [field]: value } } });
            if (own === undefined) expect(issues).toEqual([]);
            else {
              expect(issues).toHaveLength(1);
              // A refill rate too slow for the capacity is the capacity's range, as in code.
              expect(issues[0]!.path).toBe(`rateLimiters.x.${own.option}`);
              expect(issues[0]!.message).toContain(`expected ${own.expected}`);
            }
          },
        ),
        { numRuns: 200 },
      );
    },
  );

  it('a keyed limiter runs with exactly the options of a named one built from the same entry', () => {
    const rate = fc.oneof(
      fc.record({
        limit: fc.integer({ min: 1, max: 100_000 }),
        period: fc.integer({ min: 100, max: 2_000_000 }),
        burst: fc.option(fc.integer({ min: 1, max: 1_000 }), { nil: undefined }),
      }),
      fc.record({
        capacity: fc.integer({ min: 1, max: 1_000 }),
        refillRate: fc.double({ min: 0.001, max: 1e6, noNaN: true }),
      }),
    );
    fc.assert(
      fc.property(rate, fc.constantFrom(0, 250), fc.boolean(), (r, maxWait, debug) => {
        const entry = { ...r, permits: 1, maxWait, debug };
        const registry = new Registry({ rateLimiters: { api: entry } });
        const { name: _n, ...named } = resolved(registry.rateLimiter('api'));
        const keyed = registry.keyedRateLimiter('api', 'k');
        const { name: _k, ...fromKeyed } = resolved(keyed);
        expect(fromKeyed).toEqual(named);
        expect(keyed.name).toBe('api:k');
      }),
      { numRuns: 300 },
    );
  });
});

describe('named rate limiters', () => {
  it('returns the same instance for a name every time, named after the entry, on the registry clock', () => {
    const clock = new ManualClock();
    const registry = new Registry({ defaults: { rateLimiter: { limit: 2 } } }, { clock });
    const api = registry.rateLimiter('api');
    expect(api).toBeInstanceOf(RateLimiter);
    expect(registry.rateLimiter('api')).toBe(api);
    expect(registry.rateLimiter('other')).not.toBe(api);
    expect(api.name).toBe('api');
    expect(api.clock).toBe(clock);
    // Each kind has its own names.
    expect(registry.bulkhead('api')).toBeInstanceOf(Bulkhead);
    expect(registry.rateLimiter('api')).toBe(api);
  });

  it('limits calls through a pipeline at the configured rate', () => {
    const clock = new ManualClock();
    const registry = new Registry({ rateLimiters: { api: { limit: 2, period: '1s' } } }, { clock });
    const p = pipeline(registry.rateLimiter('api'));
    expect(p.executeSync(() => 1)).toBe(1);
    expect(p.executeSync(() => 2)).toBe(2);
    expect(() => p.executeSync(() => 3)).toThrow(RateLimitedError);
    clock.advance(500);
    expect(p.executeSync(() => 4)).toBe(4);
  });

  it('rejects a name that is not a non-empty string', () => {
    const registry = new Registry({ defaults: { rateLimiter: { limit: 1 } } });
    expect(() => registry.rateLimiter('')).toThrow(OptionsError);
    expect(() => registry.keyedRateLimiter('', 'k')).toThrow(OptionsError);
    expect(() => registry.keyedRateLimiter('api', 5 as unknown as string)).toThrow(
      /Expected `key` to be a string/,
    );
  });
});

describe('register', () => {
  it('makes a limiter built in code the one a name returns, with no rate needed in the config', () => {
    const registry = new Registry();
    const own = new RateLimiter({ limit: 3, name: 'own' });
    registry.register('api', own);
    expect(registry.rateLimiter('api')).toBe(own);
  });

  it('throws when the name already has a rate limiter, built or registered', () => {
    const registry = new Registry({ defaults: { rateLimiter: { limit: 1 } } });
    registry.rateLimiter('built');
    expect(() => registry.register('built', new RateLimiter({ limit: 1 }))).toThrow(UsageError);
    registry.register('mine', new RateLimiter({ limit: 1 }));
    expect(() => registry.register('mine', new RateLimiter({ limit: 2 }))).toThrow(
      /already has a rate limiter named "mine"/,
    );
    // Another kind under the same name is fine.
    registry.register('mine', new Bulkhead(1));
  });
});

describe('keyed rate limiters', () => {
  it('one per key, the same one on every use, named after the name and the key, built from the config of the name', () => {
    const registry = new Registry({
      defaults: { rateLimiter: { limit: 3 } },
      rateLimiters: { clients: { limit: 7 } },
    });
    const a = registry.keyedRateLimiter('clients', 'a');
    expect(registry.keyedRateLimiter('clients', 'a')).toBe(a);
    expect(registry.keyedRateLimiter('clients', 'b')).not.toBe(a);
    expect(a.name).toBe('clients:a');
    expect(a.burst).toBe(7);
    expect(registry.keyedRateLimiter('others', 'a').burst).toBe(3);
    // Keys of a name are apart from the named instance of that name.
    registry.rateLimiter('clients').tryAcquire(7);
    expect(a.available).toBe(7);
  });

  it('never evicts a limiter with permits taken until they are free again, then evicts it', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { keys: { maxKeys: 1 }, rateLimiters: { clients: { limit: 2, period: '1s' } } },
      { clock },
    );
    const a = registry.keyedRateLimiter('clients', 'a');
    expect(a.tryAcquire()).toBe(0);
    registry.keyedRateLimiter('clients', 'b');
    // Over the cap: a is the only candidate and has a permit taken.
    expect(keysOf(registry)).toEqual(['b', 'a']);
    expect(registry.keyedRateLimiter('clients', 'a')).toBe(a);
    clock.advance(499);
    registry.keyedRateLimiter('clients', 'b');
    expect(keysOf(registry)).toEqual(['b', 'a']);
    clock.advance(1);
    expect(a.available).toBe(2);
    registry.keyedRateLimiter('clients', 'c');
    expect(keysOf(registry)).toEqual(['c']);
    expect(registry.keyedRateLimiter('clients', 'a')).not.toBe(a);
  });

  it('never evicts a limiter with a caller waiting for its turn', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        keys: { maxKeys: 1 },
        rateLimiters: { clients: { limit: 1, period: '1s', maxWait: '2s' } },
      },
      { clock },
    );
    const a = registry.keyedRateLimiter('clients', 'a');
    a.tryAcquire();
    const waiting = track(a.acquire());
    expect(a.stats().waiting).toBe(1);
    registry.keyedRateLimiter('clients', 'b');
    registry.keyedRateLimiter('clients', 'c');
    expect(keysOf(registry)).toContain('a');
    await clock.advanceAsync(1_000);
    await flushMicrotasks();
    expect(waiting).toMatchObject({ settled: true, ok: true });
    expect(registry.keyedRateLimiter('clients', 'a')).toBe(a);
  });

  it('disposes what it evicts: listeners of an evicted limiter are removed', () => {
    const registry = new Registry({ keys: { maxKeys: 1 }, rateLimiters: { c: { limit: 1 } } });
    const a = registry.keyedRateLimiter('c', 'a');
    let refusals = 0;
    a.onRejected(() => refusals++);
    registry.keyedRateLimiter('c', 'b');
    expect(keysOf(registry)).toEqual(['b']);
    a.tryAcquire();
    // A listener still attached would see this refusal.
    expect(a.tryAcquire()).toBeGreaterThan(0);
    expect(refusals).toBe(0);
  });

  it('a limiter with permits taken outlives the idle timeout, and goes once it is idle', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { keys: { idleTimeout: 100 }, rateLimiters: { c: { limit: 1, period: '1h' } } },
      { clock },
    );
    const a = registry.keyedRateLimiter('c', 'a');
    a.tryAcquire();
    clock.advance(150);
    expect(keysOf(registry)).toEqual(['a']);
    expect(registry.keyedRateLimiter('c', 'a')).toBe(a);
    expect(a.tryAcquire()).toBeGreaterThan(0);
    clock.advance(3_600_000);
    expect(keysOf(registry)).toEqual([]);
  });

  it('property: limiters that are not back to idle are never evicted, and the cap is exceeded only while all other keys are busy', async () => {
    type Op =
      | { op: 'use' | 'take' | 'wait'; key: number; permits: number }
      | { op: 'advance'; ms: number };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        op: fc.constantFrom('use', 'take', 'wait'),
        key: fc.nat(7),
        permits: fc.integer({ min: 1, max: 2 }),
      }),
      fc.record({ op: fc.constant('advance'), ms: fc.integer({ min: 1, max: 400 }) }),
    ) as fc.Arbitrary<Op>;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 50, max: 1_000 }),
        fc.array(opArb, { maxLength: 60 }),
        async (maxKeys, idleTimeout, ops) => {
          const clock = new ManualClock();
          const registry = new Registry(
            {
              keys: { maxKeys, idleTimeout },
              rateLimiters: { clients: { limit: 2, period: 300, maxWait: 250 } },
            },
            { clock },
          );
          const held = new Map<string, RateLimiter>();
          const outcomes: ReturnType<typeof track>[] = [];
          for (const step of ops) {
            let used: string | undefined;
            if (step.op === 'advance') await clock.advanceAsync(step.ms);
            else {
              used = `k${step.key}`;
              const limiter = registry.keyedRateLimiter('clients', used);
              const before = held.get(used);
              // A key is rebuilt only when it was evicted, which needs it idle.
              if (before !== undefined && before !== limiter) {
                expect(busy({ ...before.stats(), burst: before.burst })).toBe(false);
              }
              held.set(used, limiter);
              if (step.op === 'take') limiter.tryAcquire(step.permits);
              else if (step.op === 'wait') outcomes.push(track(limiter.acquire(step.permits)));
            }
            const entries = keyedLimiters(registry);
            const byKey = new Map(entries.map((e) => [e.key!, e]));
            for (const [key, limiter] of held) {
              const stats = { ...limiter.stats(), burst: limiter.burst };
              if (!busy(stats)) continue;
              const entry = byKey.get(key);
              expect(entry, `${key} is busy and must be kept`).toBeDefined();
              expect(entry!.stats).toEqual(stats);
              expect(registry.keyedRateLimiter('clients', key)).toBe(limiter);
            }
            // A use gets back under the cap unless the other keys are all busy.
            if (used !== undefined && entries.length > maxKeys) {
              for (const e of entries.filter((x) => x.key !== used)) {
                expect(
                  busy(e.stats),
                  `over the cap (${entries.length} > ${maxKeys}) with ${e.key} idle`,
                ).toBe(true);
              }
            }
          }
          await clock.runAll();
          await flushMicrotasks();
          // No waiter was ever dropped: each one was admitted or refused for its wait.
          for (const o of outcomes) {
            expect(o.settled).toBe(true);
            if (!o.ok) expect(o.error).toBeInstanceOf(RateLimitedError);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('an idle limiter is rebuilt on its next use and admits a whole burst; a busy one or one with a listener is kept', () => {
    const clock = new ManualClock();
    const registry = new Registry({ rateLimiters: { c: { limit: 3, period: '1s' } } }, { clock });
    const idle = registry.keyedRateLimiter('c', 'idle');
    idle.tryAcquire(3);
    const taken = registry.keyedRateLimiter('c', 'taken');
    taken.tryAcquire();
    const watched = registry.keyedRateLimiter('c', 'watched');
    watched.onRejected(() => {});
    clock.advance(1_000);
    taken.tryAcquire(3);
    for (let i = 0; i < LIVE_LIMIT + 10; i++) registry.keyedRateLimiter('c', `other${i}`);
    // A shelved key is listed as idle, with its counters started again.
    expect(keyedLimiters(registry).find((e) => e.key === 'idle')).toMatchObject({
      stats: { admitted: 0, rejected: 0, waiting: 0, available: 3, burst: 3 },
    });
    const rebuilt = registry.keyedRateLimiter('c', 'idle');
    expect(rebuilt).not.toBe(idle);
    expect(rebuilt.tryAcquire(3)).toBe(0);
    expect(registry.keyedRateLimiter('c', 'taken')).toBe(taken);
    expect(taken.tryAcquire()).toBeGreaterThan(0);
    expect(registry.keyedRateLimiter('c', 'watched')).toBe(watched);
  });
});

describe('snapshot', () => {
  it('lists named and keyed rate limiters with their counters, as plain data', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        defaults: { rateLimiter: { limit: 5 } },
        rateLimiters: { api: { limit: 2, period: '1s', maxWait: '1s' } },
      },
      { clock },
    );
    const api = registry.rateLimiter('api');
    api.tryAcquire();
    api.tryAcquire();
    expect(api.tryAcquire()).toBe(500);
    const waiting = track(api.acquire());
    registry.keyedRateLimiter('tenants', 't1');

    const snapshot = registry.snapshot();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot.instances).toEqual([
      {
        kind: 'rateLimiter',
        name: 'api',
        stats: { admitted: 3, rejected: 1, waiting: 1, available: 0, burst: 2 },
      },
      {
        kind: 'rateLimiter',
        name: 'tenants',
        key: 't1',
        stats: { admitted: 0, rejected: 0, waiting: 0, available: 5, burst: 5 },
      },
    ]);
    for (const entry of snapshot.instances) {
      expect(Object.getPrototypeOf(entry.stats)).toBe(Object.prototype);
    }
    await clock.advanceAsync(500);
    await flushMicrotasks();
    expect(waiting).toMatchObject({ settled: true, ok: true });
    expect(registry.snapshot().instances[0]).toMatchObject({
      stats: { waiting: 0, available: 0 },
    });
    clock.advance(1_000);
    expect(registry.snapshot().instances[0]).toMatchObject({ stats: { available: 2 } });
  });

  it('comes after the other named kinds, and keyed limiters after the other keyed kinds', () => {
    const registry = new Registry({ defaults: { rateLimiter: { limit: 1 } } });
    registry.keyedRateLimiter('r', 'k');
    registry.rateLimiter('r');
    registry.keyedBulkhead('b', 'k');
    registry.bulkhead('b');
    expect(registry.snapshot().instances.map((i) => [i.kind, i.key])).toEqual([
      ['bulkhead', undefined],
      ['rateLimiter', undefined],
      ['bulkhead', 'k'],
      ['rateLimiter', 'k'],
    ]);
  });
});

describe('reconfigure', () => {
  it('keeps the permits taken: a limiter that used its burst is still refused at the same rate', () => {
    const clock = new ManualClock();
    const config: RegistryConfig = { rateLimiters: { api: { limit: 2, period: '1s' } } };
    const registry = new Registry(config, { clock });
    const api = registry.rateLimiter('api');
    expect(api.tryAcquire(2)).toBe(0);
    registry.reconfigure(config);
    expect(registry.rateLimiter('api')).toBe(api);
    expect(api.tryAcquire()).toBe(500);
    expect(api.stats()).toMatchObject({ admitted: 1, rejected: 1 });
  });

  it('applies the new rate to the calls to come', () => {
    const clock = new ManualClock();
    const registry = new Registry({ rateLimiters: { api: { limit: 2, period: '1s' } } }, { clock });
    const api = registry.rateLimiter('api');
    api.tryAcquire(2);
    registry.reconfigure({ rateLimiters: { api: { limit: 4, period: '1s' } } });
    expect([api.burst, api.interval]).toEqual([4, 250]);
    // The two permits taken at 500 ms each still hold the first second.
    expect(api.tryAcquire()).toBe(250);
    clock.advance(1_000);
    expect(api.tryAcquire(4)).toBe(0);
  });

  it('applies new settings to keyed limiters, live and not yet built, keeping permits taken', () => {
    const clock = new ManualClock();
    const registry = new Registry({ rateLimiters: { c: { limit: 1, period: '1s' } } }, { clock });
    const a = registry.keyedRateLimiter('c', 'a');
    a.tryAcquire();
    registry.reconfigure({ rateLimiters: { c: { limit: 1, period: '1s', burst: 3 } } });
    expect(registry.keyedRateLimiter('c', 'a')).toBe(a);
    expect(a.burst).toBe(3);
    expect(a.available).toBe(2);
    expect(registry.keyedRateLimiter('c', 'b').burst).toBe(3);
  });

  it('reports a maxWait turned on for a limiter built without one, and then changes nothing', () => {
    const registry = new Registry({
      rateLimiters: { api: { limit: 2 } },
      bulkheads: { pool: { maxConcurrent: 2 } },
    });
    const api = registry.rateLimiter('api');
    const pool = registry.bulkhead('pool');
    const issues = thrownIssues(() =>
      registry.reconfigure({
        rateLimiters: { api: { limit: 10, maxWait: '1s' } },
        bulkheads: { pool: { maxConcurrent: 8 } },
      }),
    );
    expect(issues).toEqual([
      {
        path: 'rateLimiters.api.maxWait',
        message: expect.stringMatching(/^expected 0: a limiter built without waiting/),
      },
    ]);
    expect(api.burst).toBe(2);
    expect(pool.maxConcurrent).toBe(2);
  });

  it('changes nothing when any part of the new config is invalid', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { rateLimiters: { api: { limit: 2 }, c: { limit: 1 } }, keys: { maxKeys: 10 } },
      { clock },
    );
    const api = registry.rateLimiter('api');
    const a = registry.keyedRateLimiter('c', 'a');
    const issues = thrownIssues(() =>
      registry.reconfigure({
        rateLimiters: { api: { limit: 20 }, c: { limit: 5 } },
        retries: { r: { maxAttempts: 0 } },
        keys: { maxKeys: 1 },
      }),
    );
    expect(issues.map((i) => i.path)).toEqual(['retries.r.maxAttempts']);
    expect(api.burst).toBe(2);
    expect(a.burst).toBe(1);
    registry.keyedRateLimiter('c', 'b');
    expect(keysOf(registry)).toEqual(['b', 'a']);
    expect(registry.keyedRateLimiter('c', 'new').burst).toBe(1);
  });

  it('needs a rate for a limiter in use whose entry is gone', () => {
    const registry = new Registry({ rateLimiters: { api: { limit: 2 } } });
    const api = registry.rateLimiter('api');
    expect(thrownIssues(() => registry.reconfigure({}))).toEqual([
      { path: 'rateLimiters.api.limit', message: expect.stringMatching(/^is required/) },
    ]);
    registry.reconfigure({ defaults: { rateLimiter: { limit: 9 } } });
    expect(api.burst).toBe(9);
  });

  it('drops idle keyed limiters that cannot take new settings; a busy one makes the change fail', () => {
    const clock = new ManualClock();
    const registry = new Registry({ rateLimiters: { c: { limit: 1, period: '1s' } } }, { clock });
    const idle = registry.keyedRateLimiter('c', 'idle');
    const taken = registry.keyedRateLimiter('c', 'taken');
    taken.tryAcquire();
    const next = { rateLimiters: { c: { limit: 1, period: '1s', maxWait: '1s' } } };
    expect(thrownIssues(() => registry.reconfigure(next)).map((i) => i.path)).toEqual([
      'rateLimiters.c.maxWait',
    ]);
    expect(registry.keyedRateLimiter('c', 'idle')).toBe(idle);
    clock.advance(1_000);
    registry.reconfigure(next);
    const rebuilt = registry.keyedRateLimiter('c', 'idle');
    expect(rebuilt).not.toBe(idle);
    expect(rebuilt.mayWait).toBe(true);
  });

  it('never changes limiters registered from code, and applies new key limits to keyed ones', () => {
    const registry = new Registry({
      rateLimiters: { own: { limit: 1 }, c: { limit: 1 } },
      keys: { maxKeys: 10 },
    });
    const own = new RateLimiter({ name: 'own', limit: 3 });
    registry.register('own', own);
    for (let i = 0; i < 5; i++) registry.keyedRateLimiter('c', `k${i}`);
    registry.reconfigure({
      rateLimiters: { own: { limit: 100 }, c: { limit: 1 } },
      keys: { maxKeys: 2 },
    });
    expect(own.burst).toBe(3);
    expect(keysOf(registry)).toEqual(['k4', 'k3']);
  });
});

describe('dispose', () => {
  it('disposes named, registered and keyed limiters: waiters fail with UsageError, listeners are removed', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { defaults: { rateLimiter: { limit: 1, period: '1s', maxWait: '5s' } } },
      { clock },
    );
    const api = registry.rateLimiter('api');
    const own = new RateLimiter({ limit: 1, maxWait: 5_000, clock });
    registry.register('own', own);
    const keyed = registry.keyedRateLimiter('c', 'a');
    let refusals = 0;
    for (const l of [api, own, keyed]) {
      l.onRejected(() => refusals++);
      l.tryAcquire();
    }
    const waiters = [api, own, keyed].map((l) => track(l.acquire()));

    registry.dispose();
    await flushMicrotasks();

    for (const w of waiters) {
      expect(w.settled).toBe(true);
      expect(w.error).toBeInstanceOf(UsageError);
    }
    expect(api.tryAcquire(1)).toBeGreaterThan(0);
    expect(refusals).toBe(0);
    expect(registry.snapshot()).toEqual({ instances: [] });
    expect(registry.rateLimiter('api')).not.toBe(api);
    expect(registry.keyedRateLimiter('c', 'a')).not.toBe(keyed);
  });
});
