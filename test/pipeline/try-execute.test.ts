import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  type ExecutionResult,
  fallback,
  IsolatedCircuitError,
  type Pipeline,
  pipeline,
  Retry,
  retry,
  Timeout,
  TimeoutError,
  timeout,
  UsageError,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { track } from '../support/async.js';

describe('tryExecute never rejects', () => {
  it.each<[string, () => unknown]>([
    [
      'a synchronous throw',
      () => {
        throw new Error('sync');
      },
    ],
    ['a rejected promise', () => Promise.reject(new Error('async'))],
    [
      'a thrown string',
      () => {
        throw 'text';
      },
    ],
    [
      'a thrown undefined',
      () => {
        throw undefined;
      },
    ],
  ])('%s becomes { ok: false, rejected: false } on every path', async (_, fn) => {
    const clock = new ManualClock();
    const pipelines = [
      pipeline(),
      pipeline(new CircuitBreaker({ clock })),
      pipeline(new Bulkhead({ maxConcurrent: 1, clock })),
      pipeline(retry({ clock, maxAttempts: 1 }), timeout({ timeout: 100, clock })),
      pipeline(timeout({ timeout: 100, clock, strategy: 'aggressive' })),
    ];
    let expected: unknown;
    try {
      await fn();
    } catch (error) {
      expected = error;
    }
    for (const p of pipelines) {
      for (const signal of [undefined, new AbortController().signal]) {
        const r = await p.tryExecute(fn, { signal });
        expect(r).toEqual({ ok: false, error: expected, rejected: false });
      }
    }
  });

  it('a caller abort (before the call, during a delay, in a queue, in flight) gives rejected: false', async () => {
    const clock = new ManualClock();
    const reason = new Error('caller');
    const pre = await pipeline(retry({ clock })).tryExecute(() => 1, {
      signal: AbortSignal.abort(reason),
    });
    expect(pre).toEqual({ ok: false, error: reason, rejected: false });

    const inDelay = new AbortController();
    const delayed = track(
      pipeline(retry({ clock, delay: 100, jitter: 'none' })).tryExecute(
        () => Promise.reject(new Error('x')),
        { signal: inDelay.signal },
      ),
    );
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 1, clock });
    const pooled = pipeline(pool);
    void pooled.tryExecute(() => new Promise(() => {}));
    const inQueue = new AbortController();
    const queued = track(pooled.tryExecute(() => 1, { signal: inQueue.signal }));
    const inFlight = new AbortController();
    const running = track(
      pipeline(timeout({ timeout: 1_000, strategy: 'aggressive', clock })).tryExecute(
        () => new Promise(() => {}),
        { signal: inFlight.signal },
      ),
    );
    await flushMicrotasks();
    for (const c of [inDelay, inQueue, inFlight]) c.abort(reason);
    await flushMicrotasks();
    for (const call of [delayed, queued, running]) {
      expect(call.ok).toBe(true);
      expect(call.value).toEqual({ ok: false, error: reason, rejected: false });
    }
  });

  it('a disposed policy ending a wait gives a UsageError with rejected: false', async () => {
    const clock = new ManualClock();
    const r = new Retry({ clock, delay: 100, jitter: 'none' });
    const call = track(pipeline(r).tryExecute(() => Promise.reject(new Error('x'))));
    await flushMicrotasks();
    r.dispose();
    await flushMicrotasks();
    expect(call.ok).toBe(true);
    expect(call.value).toMatchObject({ ok: false, rejected: false });
    expect(call.value!.ok === false && call.value!.error).toBeInstanceOf(UsageError);
  });

  // A user predicate that throws must not escape the executor: the promise would reject and
  // the permits of the policies outside it would never be returned.
  it('a throwing retry predicate still resolves, and the bulkhead outside gets its permit back', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(
      pool,
      retry({
        clock,
        handle: () => {
          throw new Error('bad predicate');
        },
      }),
    );
    const call = track(p.tryExecute(() => Promise.reject(new Error('x'))));
    await flushMicrotasks();
    expect(call.ok).toBe(true);
    expect(call.value).toMatchObject({ ok: false, rejected: false });
    expect(pool.inFlight).toBe(0);
  });
  // A thenable whose `then` throws must fail the call, not escape synchronously with the
  // permit still taken.
  it.each([
    ['gates only', (pool: Bulkhead) => pipeline(pool)],
    ['with retry', (pool: Bulkhead) => pipeline(retry({ maxAttempts: 1 }), pool)],
    [
      'with an aggressive timeout',
      (pool: Bulkhead) =>
        pipeline(timeout({ timeout: 100, strategy: 'aggressive', clock: new ManualClock() }), pool),
    ],
  ])(
    '%s: a thenable whose then() throws is a failure like any other, and the permit is returned',
    async (_, make) => {
      const pool = new Bulkhead(1);
      const error = new Error('bad thenable');
      const thenable = {
        // biome-ignore lint/suspicious/noThenProperty: a misbehaving thenable is the point here.
        then: () => {
          throw error;
        },
      };
      let thrown: unknown;
      let call: ReturnType<typeof track<ExecutionResult<unknown>>> | undefined;
      try {
        call = track(make(pool).tryExecute(() => thenable));
      } catch (e) {
        thrown = e;
      }
      await flushMicrotasks();
      expect(thrown).toBeUndefined();
      expect(call?.value).toEqual({ ok: false, error, rejected: false });
      expect(pool.inFlight).toBe(0);
    },
  );
});

/**
 * Runs `fn` through `p.execute`, which must return a promise (not throw synchronously) that
 * rejects with an instance of `type`, or resolves with `resolvesTo` when given.
 */
async function executeMustReject(
  p: Pipeline,
  fn: () => unknown,
  type: new (...args: never[]) => unknown,
  options?: { signal?: AbortSignal },
): Promise<void> {
  let promise: Promise<unknown> | undefined;
  expect(() => {
    promise = p.execute(fn, options);
  }).not.toThrow();
  await expect(promise).rejects.toBeInstanceOf(type);
}

// An object made from Promise.prototype passes `instanceof Promise`, and its `then` throws
// (there is no promise inside): that must not escape with the gates still held.
describe('an object made from Promise.prototype fails the call and returns the permit', () => {
  const fake = (): unknown => Object.create(Promise.prototype);
  const pipelines = [
    ['a lone bulkhead', (pool: Bulkhead) => pipeline(pool)],
    ['two gates', (pool: Bulkhead) => pipeline(new CircuitBreaker(), pool)],
    ['with retry', (pool: Bulkhead) => pipeline(retry({ maxAttempts: 1 }), pool)],
    [
      'with an aggressive timeout',
      (pool: Bulkhead) =>
        pipeline(timeout({ timeout: 100, strategy: 'aggressive', clock: new ManualClock() }), pool),
    ],
  ] as const;
  const executeFake = (p: Pipeline) => executeMustReject(p, fake, TypeError);
  for (const [name, make] of pipelines) {
    it(`execute, ${name}`, async () => {
      const pool = new Bulkhead(1);
      const p = make(pool);
      await executeFake(p);
      expect(pool.inFlight).toBe(0);
      await expect(p.execute(async () => 7)).resolves.toBe(7);
    });
    it(`tryExecute, ${name}`, async () => {
      const pool = new Bulkhead(1);
      const result = await make(pool).tryExecute(fake);
      expect(result).toMatchObject({ ok: false, rejected: false });
      expect(result.ok || result.error).toBeInstanceOf(TypeError);
      expect(pool.inFlight).toBe(0);
    });
  }
  it('execute, a lone breaker timing every call: counted as a failure', async () => {
    const breaker = new CircuitBreaker({ clock: new ManualClock(), metrics: { latency: true } });
    await executeFake(pipeline(breaker));
    expect(breaker.stats()).toMatchObject({ failures: 1, successes: 0 });
  });
});

describe('tryExecute: rejected is true only for policy refusals', () => {
  it('an open breaker, an isolated breaker, a full bulkhead, a queue timeout and a timeout', async () => {
    const clock = new ManualClock();
    const open = new CircuitBreaker({ clock });
    open.trip();
    const isolated = new CircuitBreaker({ clock });
    isolated.isolate();
    const full = new Bulkhead({ maxConcurrent: 1, clock });
    const waiting = new Bulkhead({ maxConcurrent: 1, maxQueue: 1, queueTimeout: 10, clock });
    const never = () => new Promise<never>(() => {});

    for (const [p, type] of [
      [pipeline(open), BrokenCircuitError],
      [pipeline(isolated), IsolatedCircuitError],
      [pipeline(retry({ clock }), open), BrokenCircuitError],
    ] as const) {
      const r = await p.tryExecute(() => 'unreachable');
      expect(r).toMatchObject({ ok: false, rejected: true });
      expect((r as { error: unknown }).error).toBeInstanceOf(type);
    }

    void pipeline(full).tryExecute(never);
    const refused = await pipeline(full).tryExecute(() => 1);
    expect(refused).toMatchObject({ ok: false, rejected: true, error: { reason: 'full' } });

    void pipeline(waiting).tryExecute(never);
    const queued = track(pipeline(waiting).tryExecute(() => 1));
    const timedOut = track(
      pipeline(timeout({ timeout: 10, clock })).tryExecute(({ signal }) => {
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        );
      }),
    );
    const aggressive = track(
      pipeline(timeout({ timeout: 10, clock, strategy: 'aggressive' })).tryExecute(never),
    );
    await clock.advanceAsync(10);
    expect(queued.value).toMatchObject({ ok: false, rejected: true });
    expect((queued.value as { error: unknown }).error).toBeInstanceOf(BulkheadRejectedError);
    expect((queued.value as { error: unknown }).error).toMatchObject({ reason: 'queue-timeout' });
    for (const call of [timedOut, aggressive]) {
      expect(call.value).toMatchObject({ ok: false, rejected: true });
      expect((call.value as { error: unknown }).error).toBeInstanceOf(TimeoutError);
    }
  });

  it('the same refusal object is reused: a refusal allocates no error', async () => {
    const open = new CircuitBreaker();
    open.trip();
    const p = pipeline(open);
    const a = await p.tryExecute(() => 1);
    const b = await p.tryExecute(() => 1);
    expect((a as { error: unknown }).error).toBe((b as { error: unknown }).error);
  });

  it('matches execute for any pipeline and any script of outcomes', async () => {
    type Step = 'ok' | 'fail' | 'hang';
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          retry: fc.boolean(),
          breaker: fc.boolean(),
          timeout: fc.constantFrom('none' as const, 'cooperative' as const, 'aggressive' as const),
          bulkhead: fc.boolean(),
        }),
        fc.array(
          fc.array(fc.constantFrom<Step>('ok', 'fail', 'hang'), { minLength: 3, maxLength: 3 }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        async (shape, script) => {
          const run = async (mode: 'execute' | 'tryExecute') => {
            const clock = new ManualClock();
            const policies: Parameters<typeof pipeline> = [];
            if (shape.retry)
              policies.push(new Retry({ clock, delay: 5, jitter: 'none', maxAttempts: 3 }));
            if (shape.breaker)
              policies.push(
                new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 2 } }),
              );
            if (shape.timeout !== 'none')
              policies.push(new Timeout({ timeout: 20, strategy: shape.timeout, clock }));
            if (shape.bulkhead) policies.push(new Bulkhead({ maxConcurrent: 1, clock }));
            const p: Pipeline = pipeline(...policies);
            const outcomes: unknown[] = [];
            for (const attempts of script) {
              const fn = ({ attempt, signal }: { attempt: number; signal: AbortSignal }) => {
                const step = attempts[attempt - 1]!;
                if (step === 'ok') return Promise.resolve(`ok ${attempt}`);
                if (step === 'fail') return Promise.reject(new Error(`fail ${attempt}`));
                return new Promise((_, reject) => {
                  signal.addEventListener('abort', () => reject(new Error('gave up')));
                });
              };
              let outcome: unknown;
              if (mode === 'execute') {
                const call = track(p.execute(fn));
                await clock.runAll();
                await flushMicrotasks();
                if (call.settled) {
                  outcome = call.ok
                    ? { ok: true, value: call.value }
                    : { ok: false, error: call.error };
                }
              } else {
                const call = track(p.tryExecute(fn));
                await clock.runAll();
                await flushMicrotasks();
                // tryExecute never rejects.
                expect(call.ok).not.toBe(false);
                const r = call.value;
                outcome =
                  r === undefined
                    ? undefined
                    : r.ok
                      ? { ok: true, value: r.value }
                      : {
                          ok: false,
                          error: r.error,
                        };
              }
              outcomes.push(
                outcome === undefined
                  ? 'pending'
                  : (outcome as { ok: boolean }).ok
                    ? outcome
                    : {
                        ok: false,
                        name: ((outcome as { error: Error }).error as Error).name,
                        message: ((outcome as { error: Error }).error as Error).message,
                      },
              );
            }
            return outcomes;
          };
          expect(await run('tryExecute')).toEqual(await run('execute'));
        },
      ),
      { numRuns: 200 },
    );
  });
});

// A result whose `then` getter throws (a revoked Proxy, a stale immer draft) must fail the
// call on every path, with every permit returned: never a synchronous throw from execute.
describe('a result whose then getter throws fails the call and returns every permit', () => {
  class ThenGetterError extends Error {}
  const results: readonly (readonly [string, () => unknown, new (...args: never[]) => unknown])[] =
    [
      [
        'a revoked Proxy',
        () => {
          const { proxy, revoke } = Proxy.revocable({}, {});
          revoke();
          return proxy;
        },
        TypeError,
      ],
      [
        'a Proxy whose get trap throws',
        () =>
          new Proxy(
            {},
            {
              get() {
                throw new ThenGetterError('stale draft');
              },
            },
          ),
        ThenGetterError,
      ],
    ];
  const clock = new ManualClock();
  const pipelines: readonly (readonly [string, (pool: Bulkhead) => Pipeline, boolean?])[] = [
    ['a lone bulkhead', (pool) => pipeline(pool)],
    ['two gates', (pool) => pipeline(new CircuitBreaker(), pool)],
    [
      'a lone breaker timing its calls',
      (pool) => pipeline(new CircuitBreaker({ clock, metrics: { latency: true } }), pool),
    ],
    ['with retry', (pool) => pipeline(retry({ maxAttempts: 2, delay: 0 }), pool)],
    ['with a cooperative timeout', (pool) => pipeline(timeout({ timeout: 100, clock }), pool)],
    [
      'with an aggressive timeout',
      (pool) => pipeline(timeout({ timeout: 100, strategy: 'aggressive', clock }), pool),
    ],
    [
      'with a bulkhead queue',
      (pool) => pipeline(new Bulkhead({ maxConcurrent: 1, maxQueue: 1, clock }), pool),
    ],
    ['with a caller signal', (pool) => pipeline(pool), true],
  ];
  for (const [what, make, type] of results) {
    for (const [name, build, withSignal] of pipelines) {
      it(`${what}, ${name}: execute rejects`, async () => {
        const pool = new Bulkhead(1);
        const p = build(pool);
        const options = withSignal ? { signal: new AbortController().signal } : undefined;
        await executeMustReject(p, make, type, options);
        await clock.runAll();
        expect(pool.inFlight).toBe(0);
        await expect(p.execute(async () => 7)).resolves.toBe(7);
      });
      it(`${what}, ${name}: tryExecute resolves with the failure`, async () => {
        const pool = new Bulkhead(1);
        const options = withSignal ? { signal: new AbortController().signal } : undefined;
        const pending = build(pool).tryExecute(make, options);
        await clock.runAll();
        const result = await pending;
        expect(result).toMatchObject({ ok: false, rejected: false });
        expect(result.ok || result.error).toBeInstanceOf(type);
        expect(pool.inFlight).toBe(0);
      });
    }
    it(`${what}, returned by a fallback: execute rejects and the bulkhead outside is freed`, async () => {
      const pool = new Bulkhead(1);
      const p = pipeline(pool, fallback({ action: make }));
      await executeMustReject(p, () => Promise.reject(new Error('x')), type);
      expect(pool.inFlight).toBe(0);
    });
    it(`${what}, under a fallback: the failure falls back and the bulkhead is freed`, async () => {
      const pool = new Bulkhead(1);
      const seen: unknown[] = [];
      const p = pipeline(
        fallback({
          action: ({ error }) => {
            seen.push(error);
            return 'fallback';
          },
        }),
        pool,
      );
      let promise: Promise<unknown> | undefined;
      expect(() => {
        promise = p.execute(make);
      }).not.toThrow();
      await expect(promise).resolves.toBe('fallback');
      expect(seen[0]).toBeInstanceOf(type);
      expect(pool.inFlight).toBe(0);
    });
    it(`${what}, executeSync: throws with the bulkhead freed`, () => {
      const pool = new Bulkhead(1);
      expect(() => pipeline(pool).executeSync(make)).toThrow(type as never);
      expect(pool.inFlight).toBe(0);
    });
    it(`${what}, a half-open probe: the probe is released and counted as a failure`, async () => {
      const breaker = new CircuitBreaker({
        clock,
        breakDuration: 1_000,
        window: { kind: 'consecutive', threshold: 1 },
      });
      const p = pipeline(retry({ maxAttempts: 1, clock }), breaker);
      await expect(p.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
      expect(breaker.state).toBe('open');
      clock.advance(1_000);
      expect(breaker.state).toBe('half-open');
      await executeMustReject(p, make, type);
      expect(breaker.state).toBe('open');
      clock.advance(1_000);
      await expect(p.execute(() => 'probe')).resolves.toBe('probe');
      expect(breaker.state).toBe('closed');
    });
  }
});
