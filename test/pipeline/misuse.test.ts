/**
 * Calls that misuse `execute`: a `signal` that is not an AbortSignal, a `fn` that is not a
 * function. Each is refused with an `OptionsError` before any policy admits it, the same way on
 * every kind of pipeline, and never counted by a breaker.
 */
import { describe, expect, it } from 'vitest';
import {
  bulkhead,
  CircuitBreaker,
  type ExecuteOptions,
  fallback,
  OptionsError,
  type Pipeline,
  pipeline,
  retry,
  timeout,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';

/** Every shape of pipeline that takes its own path through `execute`, with its breaker. */
function pipelines(): [string, Pipeline, CircuitBreaker][] {
  const made: [string, (b: CircuitBreaker, clock: ManualClock) => Pipeline][] = [
    ['a lone breaker', (b) => pipeline(b)],
    ['a breaker and a bulkhead', (b) => pipeline(b, bulkhead({ maxConcurrent: 2 }))],
    ['a retry over a breaker', (b, clock) => pipeline(retry({ clock, maxAttempts: 2 }), b)],
    ['a timeout over a breaker', (b, clock) => pipeline(timeout({ clock, timeout: 1_000 }), b)],
    ['a fallback over a breaker', (b) => pipeline(fallback({ value: 'fb' }), b)],
  ];
  return made.map(([name, build]) => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 1 } });
    return [name, build(breaker, clock), breaker];
  });
}

const notSignals: [string, unknown][] = [
  ['a plain object', { aborted: false }],
  ['a string', 'abort'],
  ['an AbortController', new AbortController()],
];

describe('a signal that is not an AbortSignal', () => {
  for (const [what, signal] of notSignals) {
    const options = { signal } as unknown as ExecuteOptions;
    it.each(pipelines())(
      `${what}: execute rejects with an OptionsError through %s`,
      async (_, p, b) => {
        let ran = false;
        let thrown: unknown;
        let call: Promise<unknown> | undefined;
        try {
          call = p.execute(() => {
            ran = true;
            return 1;
          }, options);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeUndefined();
        const error = await call!.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(OptionsError);
        expect(error).toMatchObject({ option: 'signal', value: signal });
        expect(ran).toBe(false);
        expect(b.stats()).toMatchObject({ successes: 0, failures: 0, ignored: 0 });
      },
    );

    it.each(pipelines())(
      `${what}: tryExecute returns the OptionsError through %s`,
      async (_, p) => {
        const result = await p.tryExecute(() => 1, options);
        expect(result.ok).toBe(false);
        expect(!result.ok && result.error).toBeInstanceOf(OptionsError);
        expect(result).toMatchObject({ rejected: false });
      },
    );
  }

  it('executeSync throws the OptionsError', () => {
    const p = pipeline(new CircuitBreaker());
    let ran = false;
    expect(() =>
      p.executeSync(
        () => {
          ran = true;
          return 1;
        },
        { signal: 'abort' } as never,
      ),
    ).toThrow(OptionsError);
    expect(ran).toBe(false);
  });

  it('an AbortSignal of any kind is still taken: one made by AbortSignal.abort()', async () => {
    const p = pipeline(retry({ clock: new ManualClock(), maxAttempts: 2 }));
    const signal = AbortSignal.abort(new Error('stop'));
    await expect(p.execute(() => 1, { signal })).rejects.toThrow('stop');
  });
});

describe('a fn that is not a function', () => {
  for (const fn of ['not a function', undefined, 42, { call: 1 }]) {
    it.each(pipelines())(
      `execute(${JSON.stringify(fn)}) rejects with an OptionsError naming fn, uncounted, through %s`,
      async (_, p, breaker) => {
        const error = await p.execute(fn as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(OptionsError);
        expect(error).toMatchObject({ option: 'fn', code: 'ERR_BREAKWATER_INVALID_OPTION' });
        expect(breaker.stats()).toMatchObject({ successes: 0, failures: 0, ignored: 0 });
        expect(breaker.state).toBe('closed');
        const result = await p.tryExecute(fn as never);
        expect(!result.ok && result.error).toBeInstanceOf(OptionsError);
        expect(breaker.state).toBe('closed');
      },
    );
  }

  it('executeSync throws an OptionsError naming fn, and the breaker stays closed', () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    const p = pipeline(breaker);
    expect(() => p.executeSync('not a function' as never)).toThrow(OptionsError);
    expect(breaker.state).toBe('closed');
    expect(breaker.stats()).toMatchObject({ successes: 0, failures: 0, ignored: 0 });
  });
});
