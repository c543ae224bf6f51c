import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  CircuitBreaker,
  ConfigError,
  ErrorCode,
  OptionsError,
  pipeline,
  Registry,
  type RegistryConfig,
  Retry,
  Timeout,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { issuesOf, issuesOrNone, resolved } from '../support/config.js';
import { errorOf, optionsErrorOrNone } from '../support/errors.js';

describe('named instances: defaults with per-name overrides', () => {
  const config: RegistryConfig = {
    defaults: {
      circuitBreaker: {
        breakDuration: '10s',
        window: { kind: 'count', size: 20 },
        halfOpen: { probes: 3, maxWait: '1m' },
      },
      retry: { maxAttempts: 5, backoff: 'constant' },
      timeout: { strategy: 'aggressive' },
      bulkhead: { maxConcurrent: 4 },
    },
    circuitBreakers: {
      payments: { halfOpen: { probes: 5 }, window: { minimumCalls: 5 } },
      search: { window: { kind: 'consecutive', threshold: 3 } },
    },
    retries: { payments: { delay: '50ms' } },
    timeouts: { payments: { timeout: '2s' } },
    bulkheads: { payments: { maxQueue: 10 } },
  };

  it('an entry takes the defaults and changes only its own fields, nested objects field by field', () => {
    const registry = new Registry(config);
    expect(resolved(registry.circuitBreaker('payments'))).toMatchObject({
      name: 'payments',
      breakDuration: 10_000,
      windowKind: 'count',
      size: 20,
      minimumCalls: 5,
      probes: 5,
      halfOpenMaxWait: 60_000,
    });
    expect(resolved(registry.retry('payments'))).toMatchObject({
      maxAttempts: 5,
      backoff: 'constant',
      delay: 50,
    });
    const t = registry.timeout('payments');
    expect(t.timeout).toBe(2_000);
    expect(t.aggressive).toBe(true);
    const b = registry.bulkhead('payments');
    expect(b.maxConcurrent).toBe(4);
    expect(b.mayWait).toBe(true);
  });

  it('a window of another kind replaces the default window instead of merging with it', () => {
    const clock = new ManualClock();
    const registry = new Registry(config, { clock });
    const search = registry.circuitBreaker('search');
    expect(resolved(search)).toMatchObject({ windowKind: 'consecutive', threshold: 3 });
    const p = pipeline(search);
    for (let i = 0; i < 3; i++) {
      expect(() =>
        p.executeSync(() => {
          throw new Error('down');
        }),
      ).toThrow('down');
    }
    expect(search.state).toBe('open');
    // The break duration comes from the defaults.
    expect(() => p.executeSync(() => 1)).toThrow(BrokenCircuitError);
    clock.advance(9_999);
    expect(search.state).toBe('open');
    clock.advance(1);
    expect(search.state).toBe('half-open');
  });

  it('a name without an entry gets the defaults, under its own name', () => {
    const registry = new Registry(config);
    const other = registry.circuitBreaker('other');
    expect(other.name).toBe('other');
    expect(resolved(other)).toMatchObject({ breakDuration: 10_000, size: 20, probes: 3 });
    expect(registry.bulkhead('other').maxConcurrent).toBe(4);
    expect(registry.bulkhead('other').mayWait).toBe(false);
  });

  it('an empty registry builds policies with the policies own defaults', () => {
    const registry = new Registry();
    expect(resolved(registry.circuitBreaker('a'))).toEqual(
      resolved(new CircuitBreaker({ name: 'a' })),
    );
    expect(resolved(registry.retry('a'))).toMatchObject(
      (({ random, handle, clock, ...rest }) => rest)(resolved(new Retry({ name: 'a' }))),
    );
  });

  it('a timeout name with no timeout in its entry or the defaults is a ConfigError naming it', () => {
    const registry = new Registry({ timeouts: { known: { timeout: 100 } } });
    expect(registry.timeout('known').timeout).toBe(100);
    const error = errorOf(ConfigError, () => registry.timeout('unknown'));
    expect(error.issues).toEqual([
      { path: 'timeouts.unknown.timeout', message: expect.stringMatching(/is required/) },
    ]);
    // With a default timeout every name works.
    expect(new Registry({ defaults: { timeout: { timeout: '1s' } } }).timeout('any').timeout).toBe(
      1_000,
    );
  });

  it('an entry of a timeout without a timeout anywhere is reported when the config is read', () => {
    expect(issuesOf({ timeouts: { t: { strategy: 'aggressive' } } })).toEqual([
      { path: 'timeouts.t.timeout', message: expect.stringMatching(/is required/) },
    ]);
  });
});

describe('ConfigError', () => {
  const bad = {
    defaults: {
      circuitBreaker: { breakDurtion: '30s', halfOpen: { probes: 0, maxConcurrent: 3 } },
      retry: { maxDelay: 50 },
      timeouts: {},
    },
    circuitBreakers: {
      payments: {
        failureRateThreshold: 1.5,
        window: { kind: 'count', size: 10, threshold: 3 },
        handle: 'x',
      },
      search: { window: { minimumCalls: 10 } },
    },
    retries: { a: { delay: 100 }, b: { delay: '5 s', maxAttempts: 0 } },
    timeouts: { t: { strategy: 'aggresive' } },
    bulkheads: { q: { maxConcurent: 3, maxQueue: -1 } },
    keys: { maxKeys: 0, idleTimeout: 'soon' },
    circuitbreakers: {},
  };

  it('lists every problem of the data, each with its path', () => {
    const issues = issuesOf(bad);
    expect(issues.map((i) => i.path)).toEqual([
      'defaults.circuitBreaker.breakDurtion',
      'defaults.timeouts',
      'circuitBreakers.payments.window.threshold',
      'circuitBreakers.payments.handle',
      'retries.b.delay',
      'bulkheads.q.maxConcurent',
      'keys.idleTimeout',
      'circuitbreakers',
      'defaults.circuitBreaker.halfOpen.probes',
      'circuitBreakers.payments.failureRateThreshold',
      'circuitBreakers.search.window.kind',
      'defaults.retry.maxDelay',
      'retries.b.maxAttempts',
      'timeouts.t.timeout',
      'timeouts.t.strategy',
      'bulkheads.q.maxQueue',
      'keys.maxKeys',
    ]);
  });

  it('words each problem with what was expected and what was found', () => {
    const byPath = new Map(issuesOf(bad).map((i) => [i.path, i.message]));
    expect(byPath.get('circuitBreakers.payments.failureRateThreshold')).toBe(
      'expected a number in (0, 1], got 1.5',
    );
    expect(byPath.get('defaults.circuitBreaker.halfOpen.probes')).toBe(
      'expected an integer in [1, 1000000], got 0',
    );
    expect(byPath.get('defaults.retry.maxDelay')).toBe(
      'expected a number of ms in [100, 2147483647] (or a string like "30s"), got 50',
    );
    expect(byPath.get('timeouts.t.strategy')).toBe(
      'expected one of "cooperative", "aggressive", got "aggresive"',
    );
    expect(byPath.get('retries.b.delay')).toMatch(/^expected a duration.*got "5 s"$/);
  });

  it('has the invalid-config code, and a message with one line per issue', () => {
    const e = errorOf(ConfigError, () => new Registry(bad as unknown as RegistryConfig));
    expect(e.code).toBe(ErrorCode.InvalidConfig);
    expect(e.name).toBe('ConfigError');
    expect(e.message.split('\n')[0]).toBe('Invalid registry config (17 issues):');
    expect(e.message).toContain(
      '\n  circuitBreakers.payments.failureRateThreshold: expected a number in (0, 1], got 1.5',
    );
    expect(Object.isFrozen(e.issues)).toBe(true);
  });

  it('names the closest valid key for a misspelt one, at every level', () => {
    const issues = issuesOf({
      circuitBreaker: {},
      defaults: { bulkheads: {} },
      circuitBreakers: {
        a: { breakDurration: 1, halfOpen: { maxWiat: 1 }, breakBackoff: { multipler: 2 } },
        b: { window: { kind: 'time', bucket: 5 } },
      },
      retries: { r: { jiter: 'none' } },
      keys: { maxKey: 5 },
    });
    expect(issues).toEqual([
      { path: 'circuitBreaker', message: 'is not a known key (did you mean `circuitBreakers`?)' },
      {
        path: 'defaults.bulkheads',
        message: 'is not a known policy kind (did you mean `bulkhead`?)',
      },
      {
        path: 'circuitBreakers.a.breakDurration',
        message: 'is not a known option (did you mean `breakDuration`?)',
      },
      {
        path: 'circuitBreakers.a.halfOpen.maxWiat',
        message: 'is not a known option (did you mean `maxWait`?)',
      },
      {
        path: 'circuitBreakers.a.breakBackoff.multipler',
        message: 'is not a known option (did you mean `multiplier`?)',
      },
      {
        path: 'circuitBreakers.b.window.bucket',
        message: 'is not a known option (did you mean `buckets`?)',
      },
      { path: 'retries.r.jiter', message: 'is not a known option (did you mean `jitter`?)' },
      { path: 'keys.maxKey', message: 'is not a known option (did you mean `maxKeys`?)' },
    ]);
  });

  it('lists the known keys when nothing is close, and the options of the window kind given', () => {
    const issues = issuesOf({
      bulkheads: { q: { parallelism: 3 } },
      circuitBreakers: { c: { window: { kind: 'consecutive', size: 5 } } },
    });
    expect(issues).toEqual([
      {
        path: 'bulkheads.q.parallelism',
        message:
          'is not a known option; known options are `maxConcurrent`, `maxQueue`, `queueTimeout`, `queue`, `codelTarget`, `codelInterval`, `debug`, `metrics`',
      },
      {
        path: 'circuitBreakers.c.window.size',
        message: 'is not an option of a `consecutive` window; its options are `kind`, `threshold`',
      },
    ]);
  });

  it('explains that predicates, clocks and names cannot come from data', () => {
    const issues = issuesOf({
      circuitBreakers: { a: { handle: 'x', clock: 1, initialState: {}, name: 'other' } },
      retries: { r: { retryAfter: 1, random: 0.5 } },
    });
    expect(issues.map((i) => [i.path, i.message.slice(0, 30)])).toEqual([
      ['circuitBreakers.a.handle', 'cannot be set in config data: '],
      ['circuitBreakers.a.clock', 'cannot be set in config data: '],
      ['circuitBreakers.a.initialState', 'cannot be set in config data: '],
      ['circuitBreakers.a.name', 'cannot be set in config data: '],
      ['retries.r.retryAfter', 'cannot be set in config data: '],
      ['retries.r.random', 'cannot be set in config data: '],
    ]);
    expect(issues[3]!.message).toContain('the name is the key of the entry');
  });

  it('reports a value from the defaults that a named entry makes invalid where it matters', () => {
    expect(
      issuesOf({ defaults: { retry: { maxDelay: 500 } }, retries: { slow: { delay: '1s' } } }),
    ).toEqual([
      {
        path: 'retries.slow.maxDelay',
        message:
          'expected a number of ms in [1000, 2147483647] (or a string like "30s"), got 500 (from `defaults.retry.maxDelay`)',
      },
    ]);
  });

  it('does not report an option whose valid range depends on one already reported', () => {
    const issues = issuesOf({
      circuitBreakers: { a: { halfOpen: { probes: -1, maxConcurrent: 2 } } },
    });
    expect(issues.map((i) => i.path)).toEqual(['circuitBreakers.a.halfOpen.probes']);
  });

  it.each([
    [null, '(root)'],
    [[], '(root)'],
    ['config', '(root)'],
    [{ circuitBreakers: [] }, 'circuitBreakers'],
    [{ circuitBreakers: { a: 5 } }, 'circuitBreakers.a'],
    [{ circuitBreakers: { a: { halfOpen: 'fast' } } }, 'circuitBreakers.a.halfOpen'],
    [{ circuitBreakers: { a: { window: null } } }, 'circuitBreakers.a.window'],
    [{ defaults: 'none' }, 'defaults'],
    [{ keys: 10 }, 'keys'],
  ])('rejects %j where an object is expected, at %s', (config, path) => {
    expect(issuesOf(config)).toEqual([
      { path, message: expect.stringMatching(/^expected an object, got /) },
    ]);
  });

  it('rejects an empty instance name', () => {
    expect(issuesOf({ bulkheads: { '': { maxConcurrent: 1 } } })).toEqual([
      { path: 'bulkheads[""]', message: 'an instance name must not be empty' },
    ]);
  });

  it('ignores keys set to undefined, as JSON would drop them', () => {
    const registry = new Registry({
      defaults: undefined,
      circuitBreakers: { a: { breakDuration: undefined } },
    } as RegistryConfig);
    expect(resolved(registry.circuitBreaker('a')).breakDuration).toBe(30_000);
  });
});

describe('limits are the policies own', () => {
  const anyNumber = fc.oneof(
    fc.double({ noNaN: false }),
    fc.integer({ min: -5, max: 2_147_483_650 }),
    fc.constantFrom(0, 1, -1, 0.5, 1.5, 2_147_483_647, 2_147_483_648, Number.POSITIVE_INFINITY),
  );
  // Strings are durations in data (checked in duration.test.ts), so only the other fields
  // compare them with the policy's verdict.
  const anyValue = fc.oneof(anyNumber, fc.constantFrom('fast', '5', true, null));
  const DURATIONS = new Set(['breakDuration', 'slowCallDuration', 'delay', 'timeout']);

  const cases: [string, string, (field: string, v: unknown) => unknown][] = [
    ['circuitBreakers', 'failureRateThreshold', (f, v) => new CircuitBreaker({ [f]: v })],
    ['circuitBreakers', 'slowCallRateThreshold', (f, v) => new CircuitBreaker({ [f]: v })],
    ['circuitBreakers', 'breakDuration', (f, v) => new CircuitBreaker({ [f]: v })],
    ['circuitBreakers', 'slowCallDuration', (f, v) => new CircuitBreaker({ [f]: v })],
    ['retries', 'maxAttempts', (f, v) => new Retry({ [f]: v })],
    ['retries', 'delay', (f, v) => new Retry({ [f]: v })],
    ['retries', 'multiplier', (f, v) => new Retry({ [f]: v })],
    ['timeouts', 'timeout', (f, v) => new Timeout({ [f]: v } as never)],
    ['bulkheads', 'maxConcurrent', (f, v) => new Bulkhead({ [f]: v })],
    ['bulkheads', 'maxQueue', (f, v) => new Bulkhead({ [f]: v })],
  ];

  it.each(cases)(
    '%s.x.%s is accepted from data exactly when the policy accepts it in code',
    (section, field, make) => {
      fc.assert(
        fc.property(
          DURATIONS.has(field) ? fc.oneof(anyNumber, fc.constantFrom(true, null)) : anyValue,
          (value) => {
            const own = optionsErrorOrNone(() => make(field, value));
            const issues = issuesOrNone({ [section]: { x: { [field]: value } } });
            if (own === undefined) expect(issues).toEqual([]);
            else {
              expect(issues).toHaveLength(1);
              expect(issues[0]!.path).toBe(`${section}.x.${field}`);
              expect(issues[0]!.message).toContain(`expected ${own.expected}`);
            }
          },
        ),
        { numRuns: 200 },
      );
    },
  );
});

describe('untrusted keys', () => {
  const FORBIDDEN = ['__proto__', 'constructor', 'prototype'];
  const payload = (key: string) => `{"${key}": {"polluted": 1, "prototype": {"polluted": 1}}}`;

  /** Config texts with the forbidden key at every level the data has. */
  function placements(key: string): [string, string][] {
    const p = payload(key).slice(1, -1);
    return [
      ['the root', `{${p}}`],
      ['defaults', `{"defaults": {${p}}}`],
      ['defaults.circuitBreaker', `{"defaults": {"circuitBreaker": {${p}}}}`],
      [
        'defaults.circuitBreaker.halfOpen',
        `{"defaults": {"circuitBreaker": {"halfOpen": {${p}}}}}`,
      ],
      ['defaults.retry', `{"defaults": {"retry": {${p}}}}`],
      ['circuitBreakers', `{"circuitBreakers": {${p}}}`],
      ['circuitBreakers.a', `{"circuitBreakers": {"a": {${p}}}}`],
      [
        'circuitBreakers.a.window',
        `{"circuitBreakers": {"a": {"window": {"kind": "count", ${p}}}}}`,
      ],
      ['circuitBreakers.a.breakBackoff', `{"circuitBreakers": {"a": {"breakBackoff": {${p}}}}}`],
      ['retries', `{"retries": {${p}}}`],
      ['timeouts.t', `{"timeouts": {"t": {"timeout": 5, ${p}}}}`],
      ['bulkheads', `{"bulkheads": {${p}}}`],
      ['bulkheads.b', `{"bulkheads": {"b": {${p}}}}`],
      ['keys', `{"keys": {${p}}}`],
    ];
  }

  const rows = FORBIDDEN.flatMap((key) =>
    placements(key).map(([where, text]) => [key, where, text] as const),
  );

  it.each(rows)('a %s key in %s is rejected and no prototype changes', (key, where, text) => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const config = JSON.parse(text);
    const issues = issuesOf(config);
    const path = where === 'the root' ? key : `${where}.${key}`;
    expect(issues).toEqual([
      { path, message: expect.stringContaining('could change object prototypes') },
    ]);
    expect(({} as Record<string, unknown>).polluted).toBe(undefined);
    expect((Object.prototype as Record<string, unknown>).polluted).toBe(undefined);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
    expect(Object.getPrototypeOf(config)).toBe(Object.prototype);
  });

  it('reconfigure rejects them too, and the registry keeps working', () => {
    const registry = new Registry({ circuitBreakers: { a: { breakDuration: 1_000 } } });
    const a = registry.circuitBreaker('a');
    expect(() =>
      registry.reconfigure(
        JSON.parse('{"circuitBreakers": {"a": {"__proto__": {"breakDuration": 5}}}}'),
      ),
    ).toThrow(ConfigError);
    expect(({} as Record<string, unknown>).breakDuration).toBe(undefined);
    expect(resolved(a).breakDuration).toBe(1_000);
  });

  it('a policy reconfigured with a __proto__ key refuses it as an unknown option', () => {
    const breaker = new CircuitBreaker({ name: 'b' });
    expect(() => breaker.reconfigure(JSON.parse('{"__proto__": {"polluted": 1}}'))).toThrow(
      OptionsError,
    );
    expect(({} as Record<string, unknown>).polluted).toBe(undefined);
  });

  it('inherited properties of the data are not read', () => {
    const inherited = Object.create({ breakDuration: 5 }) as Record<string, unknown>;
    const registry = new Registry({ circuitBreakers: { a: inherited } } as RegistryConfig);
    expect(resolved(registry.circuitBreaker('a')).breakDuration).toBe(30_000);
  });
});
