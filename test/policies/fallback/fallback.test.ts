import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  Fallback,
  type FallbackEvent,
  type FallbackFailure,
  fallback,
  IsolatedCircuitError,
  OptionsError,
  PipelineBuilder,
  pipeline,
  retry,
  Timeout,
  TimeoutError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred } from '../../support/async.js';
import { optionsError } from '../../support/errors.js';

describe('Fallback value', () => {
  it('replaces a thrown or rejected error with the value', async () => {
    const p = pipeline(fallback({ value: 'cached' }));
    expect(
      await p.execute(() => {
        throw new Error('sync');
      }),
    ).toBe('cached');
    expect(await p.execute(() => Promise.reject(new Error('async')))).toBe('cached');
  });

  it('leaves successful results alone', async () => {
    const p = pipeline(fallback({ value: 'cached' }));
    expect(await p.execute(() => 'fresh')).toBe('fresh');
    expect(await p.execute(() => Promise.resolve('fresh async'))).toBe('fresh async');
  });

  it('accepts an explicit undefined value', async () => {
    const p = pipeline(fallback({ value: undefined }));
    expect(await p.execute(() => Promise.reject(new Error('x')))).toBeUndefined();
  });

  it('returns the very same value object each time', async () => {
    const empty: string[] = [];
    const p = pipeline(fallback({ value: empty }));
    const a = await p.execute(() => Promise.reject(new Error('x')));
    const b = await p.execute(() => Promise.reject(new Error('y')));
    expect(a).toBe(empty);
    expect(b).toBe(empty);
  });

  it('is named "fallback" by default', () => {
    expect(fallback({ value: 1 }).name).toBe('fallback');
    expect(new Fallback({ value: 1, name: 'defaults' }).name).toBe('defaults');
  });
});

describe('Fallback action', () => {
  it('calls a sync action with the error and uses what it returns', async () => {
    const seen: FallbackFailure[] = [];
    const p = pipeline(
      fallback({
        action: (failure) => {
          seen.push(failure);
          return `recovered from ${(failure.error as Error).message}`;
        },
      }),
    );
    const err = new Error('outage');
    expect(await p.execute(() => Promise.reject(err))).toBe('recovered from outage');
    expect(seen).toStrictEqual([{ error: err }]);
  });

  it('waits for an async action', async () => {
    const later = deferred<string>();
    const p = pipeline(fallback({ action: () => later.promise }));
    let settled = false;
    const result = p
      .execute(() => Promise.reject(new Error('x')))
      .then((v) => {
        settled = true;
        return v;
      });
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(false);
    later.resolve('from cache');
    expect(await result).toBe('from cache');
  });

  it('rejects with the error a sync action throws', async () => {
    const secondary = new Error('cache down too');
    const p = pipeline(
      fallback({
        action: () => {
          throw secondary;
        },
      }),
    );
    await expect(p.execute(() => Promise.reject(new Error('primary')))).rejects.toBe(secondary);
  });

  it('rejects with the error an async action rejects with', async () => {
    const secondary = new Error('cache down too');
    const p = pipeline(fallback({ action: () => Promise.reject(secondary) }));
    await expect(p.execute(() => Promise.reject(new Error('primary')))).rejects.toBe(secondary);
  });

  it('a failing fallback action is seen by an outer policy (an outer fallback catches it)', async () => {
    const secondary = new Error('inner fallback failed');
    const seen: unknown[] = [];
    const p = pipeline(
      fallback({
        action: ({ error }) => {
          seen.push(error);
          return 'outer';
        },
      }),
      fallback({
        action: () => {
          throw secondary;
        },
      }),
    );
    expect(await p.execute(() => Promise.reject(new Error('primary')))).toBe('outer');
    expect(seen).toEqual([secondary]);
  });

  it('runs through executeSync, including a throwing action', () => {
    const secondary = new Error('secondary');
    expect(
      pipeline(fallback({ value: 5 })).executeSync(() => {
        throw new Error('x');
      }),
    ).toBe(5);
    expect(() =>
      pipeline(
        fallback({
          action: () => {
            throw secondary;
          },
        }),
      ).executeSync(() => {
        throw new Error('x');
      }),
    ).toThrow(secondary);
  });
});

describe('Fallback handle and handleResult', () => {
  it('falls back only for errors handle accepts; others pass through', async () => {
    class Recoverable extends Error {}
    const p = pipeline(fallback({ value: 'fb', handle: (e) => e instanceof Recoverable }));
    expect(await p.execute(() => Promise.reject(new Recoverable('r')))).toBe('fb');
    const fatal = new Error('fatal');
    await expect(p.execute(() => Promise.reject(fatal))).rejects.toBe(fatal);
  });

  it('replaces results handleResult accepts, handing the action the result', async () => {
    const seen: FallbackFailure[] = [];
    const p = pipeline(
      fallback({
        handleResult: (r) => r === null,
        action: (failure) => {
          seen.push(failure);
          return 'default';
        },
      }),
    );
    expect(await p.execute(() => null)).toBe('default');
    expect(await p.execute(() => 'present')).toBe('present');
    expect(seen).toStrictEqual([{ result: null }]);
  });

  it('does not replace results by default, even falsy ones', async () => {
    const p = pipeline(fallback({ value: 'fb' }));
    expect(await p.execute(() => null)).toBeNull();
    expect(await p.execute(() => undefined)).toBeUndefined();
    expect(await p.execute(() => false)).toBe(false);
  });
});

describe('Fallback covers refusals of inner policies', () => {
  it('replaces an open breaker refusal', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    breaker.trip();
    const events: FallbackEvent[] = [];
    const fb = fallback({ value: 'degraded' });
    fb.onFallback((e) => events.push(e));
    let calls = 0;
    const result = await pipeline(fb, breaker).execute(() => ++calls);
    expect(result).toBe('degraded');
    expect(calls).toBe(0);
    expect(events).toHaveLength(1);
    expect(events[0]!.error).toBeInstanceOf(BrokenCircuitError);
  });

  it('replaces an isolated breaker refusal, also in executeSync', () => {
    const breaker = new CircuitBreaker();
    const release = breaker.isolate();
    const seen: unknown[] = [];
    const p = pipeline(
      fallback({
        action: ({ error }) => {
          seen.push(error);
          return 'held open';
        },
      }),
      breaker,
    );
    expect(p.executeSync(() => 'unreached')).toBe('held open');
    expect(seen[0]).toBeInstanceOf(IsolatedCircuitError);
    release();
  });

  it('replaces a full bulkhead refusal', async () => {
    const pool = new Bulkhead({ maxConcurrent: 1 });
    const gate = deferred();
    const holder = pipeline(pool).execute(() => gate.promise);
    const seen: unknown[] = [];
    const result = await pipeline(
      fallback({
        action: ({ error }) => {
          seen.push(error);
          return 'busy';
        },
      }),
      pool,
    ).execute(() => 'unreached');
    expect(result).toBe('busy');
    expect(seen[0]).toBeInstanceOf(BulkheadRejectedError);
    gate.resolve(0);
    await holder;
  });

  it('replaces a timeout, and the failure an exhausted retry ends with', async () => {
    const clock = new ManualClock();
    const seen: unknown[] = [];
    const p = new PipelineBuilder()
      .fallback({
        action: ({ error }) => {
          seen.push(error);
          return 'gave up';
        },
      })
      .retry({ clock, maxAttempts: 2, delay: 10, jitter: 'none' })
      .timeout({ timeout: 50, clock, strategy: 'aggressive' })
      .build();
    let calls = 0;
    const result = p.execute(() => {
      calls++;
      return new Promise(() => {});
    });
    await clock.runAll();
    expect(await result).toBe('gave up');
    expect(calls).toBe(2);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(TimeoutError);
  });

  it('an inner fallback hides the failure from an outer retry', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const result = await pipeline(retry({ clock }), fallback({ value: 'fb' })).execute(() => {
      calls++;
      throw new Error('x');
    });
    expect(result).toBe('fb');
    expect(calls).toBe(1);
  });

  it('a timeout outside a fallback is not covered by it', async () => {
    const clock = new ManualClock();
    const outcome = pipeline(
      new Timeout({ timeout: 10, clock }),
      fallback({ value: 'fb', handle: () => false }),
    ).execute(
      ({ signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );
    const settled = outcome.then(
      () => 'resolved',
      (e) => e,
    );
    await clock.runAll();
    expect(await settled).toBeInstanceOf(TimeoutError);
  });
});

describe('Fallback events', () => {
  it('onFallback reports the error or the result, before the action runs', async () => {
    const order: string[] = [];
    const events: FallbackEvent[] = [];
    const fb = fallback({
      handleResult: (r) => r === 'bad',
      action: () => {
        order.push('action');
        return 'fb';
      },
    });
    fb.onFallback((e) => {
      order.push('event');
      events.push(e);
    });
    const p = pipeline(fb);
    const err = new Error('x');
    await p.execute(() => Promise.reject(err));
    await p.execute(() => 'bad');
    await p.execute(() => 'good');
    expect(events).toStrictEqual([{ error: err }, { result: 'bad' }]);
    expect(order).toEqual(['event', 'action', 'event', 'action']);
  });

  it('the disposer and dispose() remove listeners', async () => {
    const fb = fallback({ value: 0 });
    const a: unknown[] = [];
    const b: unknown[] = [];
    const stopA = fb.onFallback((e) => a.push(e));
    fb.onFallback((e) => b.push(e));
    const p = pipeline(fb);
    stopA();
    await p.execute(() => Promise.reject(new Error('1')));
    fb.dispose();
    await p.execute(() => Promise.reject(new Error('2')));
    expect(a).toHaveLength(0);
    expect(b).toHaveLength(1);
  });
});

describe('Fallback options', () => {
  it('needs exactly one of value and action', () => {
    expect(() => fallback({} as never)).toThrow(OptionsError);
    expect(() => fallback({ value: 1, action: () => 2 })).toThrow(OptionsError);
    const error = optionsError(() => fallback({ value: 1, action: () => 2 }));
    expect(error.option).toBe('value');
    expect(error.message).toMatch(/^Expected `value` to be set when `action` is not/);
  });

  it('rejects an action that is not a function', () => {
    expect(() => fallback({ action: 'nope' as never })).toThrow(
      expect.objectContaining({ option: 'action' }),
    );
    expect(() => fallback({ action: null as never })).toThrow(
      expect.objectContaining({ option: 'action' }),
    );
  });
});
