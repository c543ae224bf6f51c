import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreaker,
  ErrorCode,
  OptionsError,
  PipelineBuilder,
  pipeline,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { optionsError } from '../../support/errors.js';

const MAX_MS = 2_147_483_647;

/** The OptionsError that building a breaker with `options` throws. */
const rejectionOf = (options: unknown) =>
  optionsError(() => new CircuitBreaker(options as CircuitBreakerOptions));

describe('option validation', () => {
  const invalid: [string, unknown, string][] = [
    // [description, options, option path named in the error]
    ['options that are not an object', 5, 'options'],
    ['options that are an array', [], 'options'],
    ['an empty name', { name: '' }, 'name'],
    ['a name that is not a string', { name: 7 }, 'name'],
    ['a window that is not an object', { window: 'count' }, 'window'],
    ['a window without kind', { window: { size: 10 } }, 'window.kind'],
    ['an unknown window kind', { window: { kind: 'sliding' } }, 'window.kind'],
    [
      'a zero consecutive threshold',
      { window: { kind: 'consecutive', threshold: 0 } },
      'window.threshold',
    ],
    [
      'a fractional consecutive threshold',
      { window: { kind: 'consecutive', threshold: 2.5 } },
      'window.threshold',
    ],
    [
      'a NaN consecutive threshold',
      { window: { kind: 'consecutive', threshold: Number.NaN } },
      'window.threshold',
    ],
    ['a zero count size', { window: { kind: 'count', size: 0 } }, 'window.size'],
    ['a count size above 1e6', { window: { kind: 'count', size: 1_000_001 } }, 'window.size'],
    [
      'minimumCalls above the count size',
      { window: { kind: 'count', size: 10, minimumCalls: 11 } },
      'window.minimumCalls',
    ],
    [
      'a zero minimumCalls',
      { window: { kind: 'count', size: 10, minimumCalls: 0 } },
      'window.minimumCalls',
    ],
    ['a zero time duration', { window: { kind: 'time', duration: 0 } }, 'window.duration'],
    [
      'an infinite time duration',
      { window: { kind: 'time', duration: Infinity } },
      'window.duration',
    ],
    [
      'a time duration above 2^31-1 ms',
      { window: { kind: 'time', duration: MAX_MS + 1 } },
      'window.duration',
    ],
    ['zero buckets', { window: { kind: 'time', buckets: 0 } }, 'window.buckets'],
    [
      'buckets narrower than 1 ms',
      { window: { kind: 'time', duration: 10, buckets: 11 } },
      'window.buckets',
    ],
    [
      'a fractional time minimumCalls',
      { window: { kind: 'time', minimumCalls: 1.5 } },
      'window.minimumCalls',
    ],
    [
      'a count option on a consecutive window',
      { window: { kind: 'consecutive', size: 10 } },
      'window.size',
    ],
    [
      'a time option on a count window',
      { window: { kind: 'count', buckets: 5 } },
      'window.buckets',
    ],
    [
      'a consecutive option on a time window',
      { window: { kind: 'time', threshold: 5 } },
      'window.threshold',
    ],
    ['a zero failureRateThreshold', { failureRateThreshold: 0 }, 'failureRateThreshold'],
    ['a failureRateThreshold above 1', { failureRateThreshold: 1.01 }, 'failureRateThreshold'],
    ['a NaN failureRateThreshold', { failureRateThreshold: Number.NaN }, 'failureRateThreshold'],
    [
      'a failureRateThreshold given as a percentage string',
      { failureRateThreshold: '50%' },
      'failureRateThreshold',
    ],
    ['a negative slowCallDuration', { slowCallDuration: -1 }, 'slowCallDuration'],
    ['a NaN slowCallDuration', { slowCallDuration: Number.NaN }, 'slowCallDuration'],
    ['a slowCallDuration above 2^31-1 ms', { slowCallDuration: MAX_MS + 1 }, 'slowCallDuration'],
    ['a zero slowCallRateThreshold', { slowCallRateThreshold: 0 }, 'slowCallRateThreshold'],
    ['a slowCallRateThreshold above 1', { slowCallRateThreshold: 2 }, 'slowCallRateThreshold'],
    ['a zero breakDuration', { breakDuration: 0 }, 'breakDuration'],
    ['a negative breakDuration', { breakDuration: -5 }, 'breakDuration'],
    ['an infinite breakDuration', { breakDuration: Infinity }, 'breakDuration'],
    ['a breakDuration above 2^31-1 ms', { breakDuration: MAX_MS + 1 }, 'breakDuration'],
    ['a breakBackoff that is not an object', { breakBackoff: 2 }, 'breakBackoff'],
    [
      'a backoff multiplier below 1',
      { breakBackoff: { multiplier: 0.5 } },
      'breakBackoff.multiplier',
    ],
    [
      'a backoff multiplier above 1000',
      { breakBackoff: { multiplier: 1001 } },
      'breakBackoff.multiplier',
    ],
    [
      'a backoff maxDuration below breakDuration',
      { breakDuration: 1000, breakBackoff: { maxDuration: 999 } },
      'breakBackoff.maxDuration',
    ],
    ['an unknown backoff option', { breakBackoff: { factor: 2 } }, 'breakBackoff.factor'],
    ['a halfOpen that is not an object', { halfOpen: true }, 'halfOpen'],
    ['zero probes', { halfOpen: { probes: 0 } }, 'halfOpen.probes'],
    ['fractional probes', { halfOpen: { probes: 1.5 } }, 'halfOpen.probes'],
    [
      'maxConcurrent above probes',
      { halfOpen: { probes: 2, maxConcurrent: 3 } },
      'halfOpen.maxConcurrent',
    ],
    [
      'maxConcurrent above the default of 1 probe',
      { halfOpen: { maxConcurrent: 2 } },
      'halfOpen.maxConcurrent',
    ],
    [
      'a zero maxConcurrent',
      { halfOpen: { probes: 2, maxConcurrent: 0 } },
      'halfOpen.maxConcurrent',
    ],
    ['a zero successRatio', { halfOpen: { successRatio: 0 } }, 'halfOpen.successRatio'],
    ['a successRatio above 1', { halfOpen: { successRatio: 1.5 } }, 'halfOpen.successRatio'],
    ['a zero maxWait', { halfOpen: { maxWait: 0 } }, 'halfOpen.maxWait'],
    ['a maxWait above 2^31-1 ms', { halfOpen: { maxWait: MAX_MS + 1 } }, 'halfOpen.maxWait'],
    ['a handle that is not a function', { handle: true }, 'handle'],
    ['a handleResult that is not a function', { handleResult: 'status >= 500' }, 'handleResult'],
    ['a clock without setTimer', { clock: { now: () => 0 } }, 'clock'],
    ['a debug that is not a boolean', { debug: 1 }, 'debug'],
    ['an initialState that is not a snapshot', { initialState: { state: 'open' } }, 'initialState'],
    ['an unknown top-level option', { breakDurationMs: 10 }, 'breakDurationMs'],
  ];

  it.each(invalid)('rejects %s, naming the option', (_, options, path) => {
    const error = rejectionOf(options);
    expect(error.option).toBe(path);
    expect(error.code).toBe(ErrorCode.InvalidOption);
    expect(error.message).toMatch(new RegExp(`^Expected \`${path.replace('.', '\\.')}\` to be `));
  });

  it('reports the value, the valid range and the string form', () => {
    const error = rejectionOf({ breakDuration: -5 });
    expect(error.value).toBe(-5);
    expect(error.expected).toBe(`a number of ms in [1, ${MAX_MS}] (or a string like "30s")`);
    expect(error.message).toBe(
      `Expected \`breakDuration\` to be a number of ms in [1, ${MAX_MS}] (or a string like "30s"), got -5`,
    );
    expect(rejectionOf({ failureRateThreshold: 0 }).expected).toBe('a number in (0, 1]');
    expect(rejectionOf({ halfOpen: { probes: 3, maxConcurrent: 4 } }).expected).toBe(
      'an integer in [1, 3]',
    );
  });

  it('suggests the closest known name for a misspelt option', () => {
    const error = rejectionOf({ breakDurtion: 1000 });
    expect(error.option).toBe('breakDurtion');
    expect(error.message).toContain('did you mean `breakDuration`?');
    expect(rejectionOf({ halfOpen: { maxWiat: 10 } }).message).toContain('did you mean `maxWait`?');
    expect(rejectionOf({ window: { kind: 'count', sise: 10 } }).message).toContain(
      'did you mean `size`?',
    );
  });

  it('accepts the boundary values of every range', () => {
    const clock = new ManualClock();
    const accepted: CircuitBreakerOptions[] = [
      { failureRateThreshold: 1, slowCallRateThreshold: 1 },
      { failureRateThreshold: 1e-9, slowCallRateThreshold: 1e-9 },
      { slowCallDuration: 0.001 },
      { slowCallDuration: Infinity },
      { slowCallDuration: MAX_MS },
      { breakDuration: 1 },
      { breakDuration: MAX_MS },
      { breakBackoff: { multiplier: 1, maxDuration: 30_000 } },
      { breakBackoff: { multiplier: 1000, maxDuration: MAX_MS } },
      { halfOpen: { probes: 3, maxConcurrent: 3, successRatio: 1, maxWait: 1 } },
      { halfOpen: { probes: 1_000_000, successRatio: 1e-6, maxWait: MAX_MS } },
      { window: { kind: 'consecutive', threshold: 1 } },
      { window: { kind: 'consecutive', threshold: 1_000_000 } },
      { window: { kind: 'count', size: 1, minimumCalls: 1 } },
      { window: { kind: 'count', size: 1_000_000, minimumCalls: 1_000_000 } },
      { window: { kind: 'time', duration: 1, buckets: 1, minimumCalls: 1 } },
      { window: { kind: 'time', duration: 1000, buckets: 1000, minimumCalls: 1_000_000 } },
      { name: 'x', debug: true, handle: () => true, handleResult: () => false },
      {
        name: undefined,
        window: undefined,
        breakDuration: undefined,
        halfOpen: undefined,
        handle: undefined,
      },
    ];
    for (const options of accepted) {
      expect(() => new CircuitBreaker({ clock, ...options })).not.toThrow();
    }
  });

  it('accepts any object with now, setTimer and clearTimer as a clock', () => {
    let now = 5000;
    const clock = { now: () => now, setTimer: () => 0, clearTimer: () => {} };
    const breaker = new CircuitBreaker({ clock, breakDuration: 100 });
    breaker.trip();
    now = 5099;
    expect(breaker.state).toBe('open');
    now = 5100;
    expect(breaker.state).toBe('half-open');
  });
});

describe('option effects', () => {
  it('name appears in the error, its message and the breaker', async () => {
    const breaker = new CircuitBreaker({ name: 'payments', clock: new ManualClock() });
    breaker.trip();
    const error = await pipeline(breaker)
      .execute(() => 1)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(error).toMatchObject({ policyName: 'payments', policy: 'circuitBreaker' });
    expect((error as Error).message).toBe('Circuit breaker "payments" is open');
    expect(breaker.name).toBe('payments');
  });

  it('slowCallDuration 0 is refused: every call, instant successes included, would be slow', () => {
    expect(() => new CircuitBreaker({ slowCallDuration: 0 })).toThrow(
      expect.objectContaining({
        name: 'OptionsError',
        option: 'slowCallDuration',
        value: 0,
        expected: 'a number of ms in (0, 2147483647] or Infinity (off) (or a string like "30s")',
      }),
    );
  });

  it('slowCallDuration Infinity leaves slow-call tracking off and calls untimed', async () => {
    const breaker = new CircuitBreaker({ clock: new ManualClock(), slowCallDuration: Infinity });
    expect(breaker.needsDuration).toBe(false);
    const elapsed: number[] = [];
    breaker.onSuccess((e) => elapsed.push(e.elapsed));
    await pipeline(breaker).execute(() => 1);
    expect(elapsed).toEqual([Number.NaN]);
  });

  it('a finite slowCallDuration makes the pipeline time calls', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, slowCallDuration: 1000 });
    expect(breaker.needsDuration).toBe(true);
    const elapsed: number[] = [];
    breaker.onSuccess((e) => elapsed.push(e.elapsed));
    const done = pipeline(breaker).execute(
      () => new Promise((resolve) => clock.setTimer(() => resolve(1), 250)),
    );
    clock.advance(250);
    await done;
    expect(elapsed).toEqual([250]);
  });

  it('breakDuration sets how long the breaker stays open', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, breakDuration: 1234 });
    breaker.trip();
    clock.advance(1233);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });

  it('the options object is read once: changing it later has no effect', () => {
    const clock = new ManualClock();
    const options = { clock, breakDuration: 1000 };
    const breaker = new CircuitBreaker(options);
    options.breakDuration = 5;
    breaker.trip();
    clock.advance(5);
    expect(breaker.state).toBe('open');
  });
});

describe('ways to build a breaker', () => {
  it('circuitBreaker() builds a CircuitBreaker with the same options', () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({ clock, name: 'made', breakDuration: 10 });
    expect(breaker).toBeInstanceOf(CircuitBreaker);
    expect(breaker.name).toBe('made');
    expect(() => circuitBreaker({ breakDuration: 0 })).toThrow(OptionsError);
  });

  it('PipelineBuilder.circuitBreaker takes options or shares an existing breaker', () => {
    const clock = new ManualClock();
    const shared = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 1 } });
    const a = new PipelineBuilder().circuitBreaker(shared).build();
    const b = new PipelineBuilder().circuitBreaker(shared).build();
    expect(a.policies[0]).toBe(shared);
    expect(() =>
      a.executeSync(() => {
        throw new Error('x');
      }),
    ).toThrow('x');
    // The failure seen through one pipeline opened the breaker for the other.
    expect(() => b.executeSync(() => 1)).toThrow(BrokenCircuitError);
    const built = new PipelineBuilder().circuitBreaker({ clock, name: 'fresh' }).build();
    expect(built.policies[0]).toBeInstanceOf(CircuitBreaker);
    expect((built.policies[0] as CircuitBreaker).name).toBe('fresh');
  });
});
