import { describe, expect, it } from 'vitest';
import {
  BreakwaterError,
  BrokenCircuitError,
  BulkheadRejectedError,
  ChaosFaultError,
  CircuitBreaker,
  ConcurrencyLimitError,
  ConfigError,
  ErrorCode,
  IsolatedCircuitError,
  isBrokenCircuitError,
  isBulkheadRejectedError,
  isPolicyRejection,
  isRateLimitedError,
  isTimeoutError,
  LoadShedError,
  OptionsError,
  PolicyRejectedError,
  pipeline,
  RateLimitedError,
  Retry,
  RetryExhaustedError,
  TimeoutError,
  UsageError,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';

const BRAND = Symbol.for('breakwater.error');

/** An error as another copy of the package would make it: unrelated prototype, same brand. */
function foreign(code: string, props: Record<string, unknown> = {}): Error {
  const error = new Error('from another copy');
  Object.assign(error, { code, ...props });
  (error as unknown as Record<symbol, unknown>)[BRAND] = true;
  return error;
}

const classes = [
  BreakwaterError,
  PolicyRejectedError,
  BrokenCircuitError,
  IsolatedCircuitError,
  BulkheadRejectedError,
  RateLimitedError,
  LoadShedError,
  ConcurrencyLimitError,
  TimeoutError,
  RetryExhaustedError,
  ChaosFaultError,
  OptionsError,
  UsageError,
  ConfigError,
] as const;

/** Which classes an error with each code is an instance of. */
const expectedClasses: Record<string, readonly (typeof classes)[number][]> = {
  [ErrorCode.CircuitOpen]: [BreakwaterError, PolicyRejectedError, BrokenCircuitError],
  [ErrorCode.CircuitIsolated]: [
    BreakwaterError,
    PolicyRejectedError,
    BrokenCircuitError,
    IsolatedCircuitError,
  ],
  [ErrorCode.BulkheadFull]: [BreakwaterError, PolicyRejectedError, BulkheadRejectedError],
  [ErrorCode.RateLimited]: [BreakwaterError, PolicyRejectedError, RateLimitedError],
  [ErrorCode.LoadShed]: [BreakwaterError, PolicyRejectedError, LoadShedError],
  [ErrorCode.ConcurrencyLimit]: [BreakwaterError, PolicyRejectedError, ConcurrencyLimitError],
  [ErrorCode.DeadlineTooShort]: [BreakwaterError, PolicyRejectedError, ConcurrencyLimitError],
  [ErrorCode.Timeout]: [BreakwaterError, PolicyRejectedError, TimeoutError],
  [ErrorCode.RetryExhausted]: [BreakwaterError, PolicyRejectedError, RetryExhaustedError],
  // Every copy with this code marks its rejections: the unmarked one `foreign` makes is none.
  [ErrorCode.ChaosFault]: [BreakwaterError, ChaosFaultError],
  // Their classes live in breakwater/redis (test/redis/errors.test.ts).
  [ErrorCode.StoreTimeout]: [BreakwaterError],
  [ErrorCode.StoreUnavailable]: [BreakwaterError],
  [ErrorCode.InvalidOption]: [BreakwaterError, OptionsError],
  [ErrorCode.Usage]: [BreakwaterError, UsageError],
  [ErrorCode.InvalidConfig]: [BreakwaterError, ConfigError],
};

describe('ErrorCode', () => {
  it('has the stable documented codes', () => {
    expect(ErrorCode).toEqual({
      CircuitOpen: 'ERR_BREAKWATER_CIRCUIT_OPEN',
      CircuitIsolated: 'ERR_BREAKWATER_CIRCUIT_ISOLATED',
      BulkheadFull: 'ERR_BREAKWATER_BULKHEAD_FULL',
      RateLimited: 'ERR_BREAKWATER_RATE_LIMITED',
      LoadShed: 'ERR_BREAKWATER_LOAD_SHED',
      ConcurrencyLimit: 'ERR_BREAKWATER_CONCURRENCY_LIMIT',
      DeadlineTooShort: 'ERR_BREAKWATER_DEADLINE_TOO_SHORT',
      Timeout: 'ERR_BREAKWATER_TIMEOUT',
      RetryExhausted: 'ERR_BREAKWATER_RETRY_EXHAUSTED',
      ChaosFault: 'ERR_BREAKWATER_CHAOS_FAULT',
      StoreTimeout: 'ERR_BREAKWATER_STORE_TIMEOUT',
      StoreUnavailable: 'ERR_BREAKWATER_STORE_UNAVAILABLE',
      InvalidOption: 'ERR_BREAKWATER_INVALID_OPTION',
      Usage: 'ERR_BREAKWATER_USAGE',
      InvalidConfig: 'ERR_BREAKWATER_INVALID_CONFIG',
    });
  });
});

describe('error classes', () => {
  const clock = new ManualClock(1000);
  const made: [string, Error, string, string][] = [
    [
      'BrokenCircuitError',
      new BrokenCircuitError('payments', clock, 1500),
      ErrorCode.CircuitOpen,
      'Circuit breaker "payments" is open',
    ],
    [
      'IsolatedCircuitError',
      new IsolatedCircuitError('payments', clock),
      ErrorCode.CircuitIsolated,
      'Circuit breaker "payments" is isolated (held open by hand)',
    ],
    [
      'BulkheadRejectedError',
      new BulkheadRejectedError('pool', 'full', 4),
      ErrorCode.BulkheadFull,
      'Bulkhead "pool" is full (4 in flight)',
    ],
    [
      'RateLimitedError',
      new RateLimitedError('api', clock, 1250),
      ErrorCode.RateLimited,
      'Rate limiter "api" has no permit free',
    ],
    [
      'ConcurrencyLimitError',
      new ConcurrencyLimitError('db', 'limit', 40),
      ErrorCode.ConcurrencyLimit,
      'Adaptive limit "db" is full',
    ],
    [
      'ConcurrencyLimitError',
      new ConcurrencyLimitError('db', 'deadline', 40),
      ErrorCode.DeadlineTooShort,
      'Adaptive limit "db": the call\'s time left is below the dependency\'s median latency',
    ],
    [
      'TimeoutError',
      new TimeoutError('db', 250),
      ErrorCode.Timeout,
      'Timeout "db" passed after 250 ms',
    ],
    [
      'RetryExhaustedError',
      new RetryExhaustedError('api', { status: 503 }, 1, 'max-attempts'),
      ErrorCode.RetryExhausted,
      'Retry "api" gave up (max-attempts) after 1 attempt on a result it retries',
    ],
    [
      'OptionsError',
      new OptionsError('halfOpen.maxWait', -5, 'a number of ms in [1, 2147483647]'),
      ErrorCode.InvalidOption,
      'Expected `halfOpen.maxWait` to be a number of ms in [1, 2147483647], got -5',
    ],
    ['UsageError', new UsageError('not like that'), ErrorCode.Usage, 'not like that'],
  ];

  it.each(made)('%s has its name, code and message', (name, error, code, message) => {
    expect(error.name).toBe(name);
    expect((error as BreakwaterError).code).toBe(code);
    expect(error.message).toBe(message);
    expect(String(error)).toBe(`${name}: ${message}`);
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(BreakwaterError);
  });

  it.each(made)(
    '%s is an instance of exactly the classes its code belongs to',
    (_n, error, code) => {
      for (const cls of classes) {
        expect(error instanceof cls, `${error.name} instanceof ${cls.name}`).toBe(
          expectedClasses[code]!.includes(cls),
        );
      }
    },
  );

  it('policy rejections carry the policy kind and instance name', () => {
    const open = new BrokenCircuitError('payments', clock, 0);
    expect([open.policy, open.policyName]).toEqual(['circuitBreaker', 'payments']);
    const full = new BulkheadRejectedError('pool', 'queue-timeout', 2);
    expect([full.policy, full.policyName, full.reason, full.maxConcurrent]).toEqual([
      'bulkhead',
      'pool',
      'queue-timeout',
      2,
    ]);
    const late = new TimeoutError('db', 9);
    expect([late.policy, late.policyName, late.timeout]).toEqual(['timeout', 'db', 9]);
  });

  it('BrokenCircuitError.retryAfter is computed on each read; isolation gives Infinity', async () => {
    const manual = new ManualClock();
    const breaker = new CircuitBreaker({ clock: manual, breakDuration: 1000 });
    breaker.trip();
    const p = pipeline(breaker);
    const error = (await p.execute(() => 0).catch((e) => e)) as BrokenCircuitError;
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(error.retryAfter).toBe(1000);
    manual.advance(300);
    expect(error.retryAfter).toBe(700);
    manual.advance(5000);
    expect(error.retryAfter).toBe(0);

    const isolated = new IsolatedCircuitError('x', manual);
    expect(isolated.retryAfter).toBe(Number.POSITIVE_INFINITY);
  });

  it('OptionsError carries the option path, the value and the expectation', () => {
    const value = { nested: true };
    const error = new OptionsError('window', value, 'an options object');
    expect(error.option).toBe('window');
    expect(error.value).toBe(value);
    expect(error.expected).toBe('an options object');
  });

  it.each([
    ['a string, quoted', 'abc', '"abc"'],
    ['a function', () => 1, 'a function'],
    ['an array', [1, 2], 'an array'],
    ['an object', { a: 1 }, 'an object'],
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['NaN', Number.NaN, 'NaN'],
    ['-Infinity', Number.NEGATIVE_INFINITY, '-Infinity'],
    ['a bigint', 10n, '10n'],
    ['a symbol', Symbol('s'), 'Symbol(s)'],
    ['a boolean', false, 'false'],
  ])('OptionsError describes %s in its message', (_label, value, shown) => {
    expect(new OptionsError('x', value, 'y').message).toBe(`Expected \`x\` to be y, got ${shown}`);
  });
});

describe('instanceof across duplicate copies of the package', () => {
  it('a subclass defined outside the library answers instanceof by its prototype chain', () => {
    class ShedError extends PolicyRejectedError {
      constructor() {
        super('ERR_EXAMPLE_SHED' as ErrorCode, 'shed', 'exampleShedder', 'shedder');
      }
    }
    class OtherError extends BreakwaterError {}
    const error = new ShedError();
    expect(error instanceof ShedError).toBe(true);
    expect(error instanceof PolicyRejectedError).toBe(true);
    expect(error instanceof BreakwaterError).toBe(true);
    expect(error instanceof OtherError).toBe(false);
    expect(foreign('ERR_BREAKWATER_TIMEOUT') instanceof ShedError).toBe(false);
  });

  it('an object branded by another copy with the timeout code is a TimeoutError', () => {
    const error = foreign('ERR_BREAKWATER_TIMEOUT', { timeout: 5 });
    expect(error instanceof TimeoutError).toBe(true);
    expect(error instanceof PolicyRejectedError).toBe(true);
    expect(error instanceof BreakwaterError).toBe(true);
    expect(isTimeoutError(error)).toBe(true);
    expect(isPolicyRejection(error)).toBe(true);
    expect(error instanceof BrokenCircuitError).toBe(false);
    expect(error instanceof OptionsError).toBe(false);
  });

  it('a foreign open-circuit error is a BrokenCircuitError and not a TimeoutError', () => {
    const error = foreign('ERR_BREAKWATER_CIRCUIT_OPEN');
    expect(error instanceof TimeoutError).toBe(false);
    expect(isTimeoutError(error)).toBe(false);
    expect(error instanceof BrokenCircuitError).toBe(true);
    expect(isBrokenCircuitError(error)).toBe(true);
    expect(error instanceof IsolatedCircuitError).toBe(false);
    expect(isPolicyRejection(error)).toBe(true);
  });

  it.each(Object.values(ErrorCode))('a foreign %s error matches the right classes', (code) => {
    const error = foreign(code);
    for (const cls of classes) {
      expect(error instanceof cls, `${code} instanceof ${cls.name}`).toBe(
        expectedClasses[code]!.includes(cls),
      );
    }
    expect(isBulkheadRejectedError(error)).toBe(code === ErrorCode.BulkheadFull);
    expect(isRateLimitedError(error)).toBe(code === ErrorCode.RateLimited);
  });

  it('a branded object with an unknown code is a BreakwaterError only', () => {
    const error = foreign('ERR_BREAKWATER_SOMETHING_NEW');
    expect(error instanceof BreakwaterError).toBe(true);
    for (const cls of classes.slice(1)) expect(error instanceof cls).toBe(false);
    expect(isPolicyRejection(error)).toBe(false);
  });

  it('an unbranded error with a breakwater code is not a breakwater error', () => {
    const error = Object.assign(new Error('look-alike'), { code: 'ERR_BREAKWATER_TIMEOUT' });
    for (const cls of classes) expect(error instanceof cls).toBe(false);
    expect(isTimeoutError(error)).toBe(false);
    expect(isPolicyRejection(error)).toBe(false);
  });

  it('a brand other than true does not count', () => {
    const error = foreign('ERR_BREAKWATER_TIMEOUT');
    (error as unknown as Record<symbol, unknown>)[BRAND] = 'yes';
    expect(error instanceof TimeoutError).toBe(false);
  });

  it.each([null, undefined, 'ERR_BREAKWATER_TIMEOUT', 42, {}])(
    'the guards answer false for %s',
    (value) => {
      expect(isTimeoutError(value)).toBe(false);
      expect(isBrokenCircuitError(value)).toBe(false);
      expect(isBulkheadRejectedError(value)).toBe(false);
      expect(isPolicyRejection(value)).toBe(false);
      expect(value instanceof BreakwaterError).toBe(false);
    },
  );

  it('the brand is not enumerable and not an own string key', () => {
    const error = new TimeoutError('t', 1);
    expect(Object.keys(error)).not.toContain(String(BRAND));
    expect(Object.getOwnPropertyDescriptor(error, BRAND)).toMatchObject({
      value: true,
      enumerable: false,
    });
  });
});

describe('preallocated stackless rejections', () => {
  it('a breaker rejects with the same stackless error instance each time', async () => {
    const breaker = new CircuitBreaker({ name: 'b' });
    breaker.trip();
    const p = pipeline(breaker);
    const a = await p.execute(() => 0).catch((e) => e);
    const b = await p.execute(() => 0).catch((e) => e);
    expect(a).toBeInstanceOf(BrokenCircuitError);
    expect(a).toBe(b);
    expect(a.stack).toBe('BrokenCircuitError: Circuit breaker "b" is open');
  });

  it('with debug: true each rejection is a fresh error whose stack shows the caller', async () => {
    const breaker = new CircuitBreaker({ name: 'b', debug: true });
    breaker.trip();
    const p = pipeline(breaker);
    const a = await p.execute(() => 0).catch((e) => e);
    const b = await p.execute(() => 0).catch((e) => e);
    expect(a).toBeInstanceOf(BrokenCircuitError);
    expect(b).toBeInstanceOf(BrokenCircuitError);
    expect(a).not.toBe(b);
    expect(a.stack).toContain('errors.test.ts');
    expect(b.stack).toContain('errors.test.ts');
  });

  it('building a policy leaves Error.stackTraceLimit as it was', () => {
    const before = Error.stackTraceLimit;
    new CircuitBreaker();
    new Retry();
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('after').stack).toMatch(/\n\s+at /);
  });

  it('an isolated breaker rejects with its own preallocated IsolatedCircuitError', async () => {
    const breaker = new CircuitBreaker({ name: 'b' });
    const release = breaker.isolate();
    const p = pipeline(breaker);
    const a = await p.execute(() => 0).catch((e) => e);
    const b = await p.execute(() => 0).catch((e) => e);
    expect(a).toBeInstanceOf(IsolatedCircuitError);
    expect(a.code).toBe(ErrorCode.CircuitIsolated);
    expect(a).toBe(b);
    expect(a.stack).toBe(`IsolatedCircuitError: ${a.message}`);
    release();
  });
});
