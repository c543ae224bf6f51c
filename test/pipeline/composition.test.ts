import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  bulkhead,
  CircuitBreaker,
  type ExecutionContext,
  Fallback,
  fallback,
  type Pipeline,
  PipelineBuilder,
  pipeline,
  RateLimitedError,
  Retry,
  rateLimiter,
  retry,
  Timeout,
  TimeoutError,
  timeout,
  UsageError,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { deferred, track } from '../support/async.js';
import { errorOf } from '../support/errors.js';

/** Rejects (with the signal's reason) once `ms` pass on `clock`, or at once when aborted. */
function slowFailure(clock: ManualClock, ms: number, signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const timer = clock.setTimer(() => reject(new Error('slow failure')), ms);
    signal.addEventListener('abort', () => {
      clock.clearTimer(timer);
      reject(signal.reason);
    });
  });
}

const constant = (clock: ManualClock, delay: number, maxAttempts: number) =>
  retry({ clock, delay, maxAttempts, backoff: 'constant', jitter: 'none' });

describe('composition order: outer-to-inner as written', () => {
  it('keeps the order given, for pipeline() and for PipelineBuilder', () => {
    const r = retry();
    const b = new CircuitBreaker();
    const t = timeout(100);
    const h = bulkhead(2);
    expect(pipeline(r, b, t, h).policies).toEqual([r, b, t, h]);
    expect(
      new PipelineBuilder().retry(r).circuitBreaker(b).timeout(t).bulkhead(h).build().policies,
    ).toEqual([r, b, t, h]);
    const built = new PipelineBuilder()
      .bulkhead(3)
      .timeout(50)
      .retry({ maxAttempts: 2 })
      .fallback({ value: 0 })
      .build().policies;
    expect(built.map((p) => p.constructor)).toEqual([Bulkhead, Timeout, Retry, Fallback]);
  });

  it('retry outside a breaker sends every attempt through the breaker', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 10 } });
    const p = pipeline(constant(clock, 10, 3), breaker);
    let calls = 0;
    const r = track(
      p.execute(() => {
        calls++;
        return Promise.reject(new Error(`down ${calls}`));
      }),
    );
    await clock.runAll();
    expect(calls).toBe(3);
    expect(r).toMatchObject({ ok: false, error: { message: 'down 3' } });
    expect(breaker.stats()).toMatchObject({ failures: 3, successes: 0, state: 'closed' });
  });

  it('retry outside a breaker stops when the breaker opens: a refusal is not retried', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 2 } });
    const p = pipeline(constant(clock, 10, 5), breaker);
    let calls = 0;
    const r = track(
      p.execute(() => {
        calls++;
        return Promise.reject(new Error('down'));
      }),
    );
    await clock.runAll();
    expect(calls).toBe(2);
    expect(r.ok).toBe(false);
    expect(r.error).toBeInstanceOf(BrokenCircuitError);
    expect(breaker.stats()).toMatchObject({ failures: 2, rejections: 1, state: 'open' });
  });

  it('a breaker outside retry sees one outcome per execution, whatever the attempts', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 2 } });
    const p = pipeline(breaker, constant(clock, 10, 3));
    let calls = 0;
    const failed = track(p.execute(() => Promise.reject(new Error(`down ${++calls}`))));
    await clock.runAll();
    expect(calls).toBe(3);
    expect(failed).toMatchObject({ ok: false, error: { message: 'down 3' } });
    expect(breaker.stats()).toMatchObject({ failures: 1, successes: 0, state: 'closed' });

    calls = 0;
    const recovered = track(
      p.execute(() => (++calls < 3 ? Promise.reject(new Error('flaky')) : Promise.resolve('ok'))),
    );
    await clock.runAll();
    expect(calls).toBe(3);
    expect(recovered).toMatchObject({ ok: true, value: 'ok' });
    expect(breaker.stats()).toMatchObject({ failures: 1, successes: 1, state: 'closed' });
  });

  /**
   * Attempts that fail after `attemptMs`, `delayMs` apart, under a 250 ms timeout outside the
   * retry, run to the end: when each attempt started, how the call ended, and why retrying stopped.
   */
  async function underOuterTimeout(delayMs: number, attemptMs: number) {
    const clock = new ManualClock();
    const r = constant(clock, delayMs, 10);
    const giveUps: string[] = [];
    r.onGiveUp((e) => giveUps.push(e.reason));
    const p = pipeline(timeout({ timeout: 250, clock }), r);
    const starts: number[] = [];
    const result = track(
      p.execute(({ signal }) => {
        starts.push(clock.now());
        return slowFailure(clock, attemptMs, signal);
      }),
      clock,
    );
    await clock.runAll();
    expect(clock.pendingTimers).toBe(0);
    return { starts, result, giveUps };
  }

  it('timeout outside retry is an overall deadline: a retry never sleeps into it, and gives up at once', async () => {
    const { starts, result, giveUps } = await underOuterTimeout(100, 60);
    // Attempts at 0 and 160; the second fails at 220, and a delay ending at 320 would pass 250.
    expect(starts).toEqual([0, 160]);
    expect(result).toMatchObject({ ok: false, at: 220 });
    expect(result.error).not.toBeInstanceOf(TimeoutError);
    expect(giveUps).toEqual(['deadline']);
  });

  it('timeout outside retry is an overall deadline: it aborts the attempt in flight, and retrying stops', async () => {
    const { starts, result, giveUps } = await underOuterTimeout(10, 200);
    // Attempts at 0 and 210; the deadline falls in the second.
    expect(starts).toEqual([0, 210]);
    expect(result).toMatchObject({ ok: false, at: 250 });
    expect(result.error).toBeInstanceOf(TimeoutError);
    // The retry gives up on the attempt the deadline cut.
    expect(giveUps).toEqual(['aborted']);
  });

  it('timeout inside retry limits each attempt: every attempt gets the full time and a fresh signal', async () => {
    const clock = new ManualClock();
    const p = pipeline(constant(clock, 10, 3), timeout({ timeout: 50, clock }));
    const signals: AbortSignal[] = [];
    const starts: number[] = [];
    const result = track(
      p.execute(({ signal, attempt }) => {
        starts.push(clock.now());
        signals.push(signal);
        expect(signal.aborted).toBe(false);
        expect(attempt).toBe(starts.length);
        return slowFailure(clock, 1_000, signal);
      }),
      clock,
    );
    await clock.runAll();
    expect(starts).toEqual([0, 60, 120]);
    expect(new Set(signals).size).toBe(3);
    for (const s of signals) expect(s.reason).toBeInstanceOf(TimeoutError);
    expect(result).toMatchObject({ ok: false, at: 170 });
    expect(result.error).toBeInstanceOf(TimeoutError);
  });

  it('timeout inside retry: an attempt that answers in time after timed-out ones succeeds', async () => {
    const clock = new ManualClock();
    const p = pipeline(constant(clock, 10, 3), timeout({ timeout: 50, clock }));
    const result = track(
      p.execute(({ signal, attempt }) =>
        attempt < 3 ? slowFailure(clock, 1_000, signal) : Promise.resolve(`attempt ${attempt}`),
      ),
      clock,
    );
    await clock.runAll();
    expect(result).toMatchObject({ ok: true, value: 'attempt 3', at: 120 });
  });

  it('aggressive timeout inside retry: abandoned attempts keep the inner bulkhead permits', async () => {
    const clock = new ManualClock();
    const inner = new Bulkhead({ maxConcurrent: 5, clock });
    const p = pipeline(
      constant(clock, 10, 3),
      timeout({ timeout: 50, strategy: 'aggressive', clock }),
      inner,
    );
    const works = [deferred(), deferred(), deferred()];
    let calls = 0;
    const result = track(
      p.execute(() => works[calls++]!.promise),
      clock,
    );
    await clock.runAll();
    expect(calls).toBe(3);
    expect(result).toMatchObject({ ok: false, at: 170 });
    expect(inner.inFlight).toBe(3);
    works[0]!.resolve('late');
    works[1]!.reject(new Error('late'));
    works[2]!.resolve('late');
    await flushMicrotasks();
    expect(inner.inFlight).toBe(0);
  });

  it('a bulkhead outside a retry holds one permit for all attempts; inside, one per attempt', async () => {
    const clock = new ManualClock();
    const outer = new Bulkhead({ maxConcurrent: 1, clock });
    const innerRetry = pipeline(outer, constant(clock, 10, 3));
    const seen: number[] = [];
    const r1 = track(
      innerRetry.execute(({ attempt }) => {
        seen.push(outer.inFlight);
        return attempt < 3 ? Promise.reject(new Error('x')) : 'done';
      }),
    );
    await flushMicrotasks();
    // While the first execution waits between attempts, it still holds the only permit.
    const refused = track(innerRetry.execute(() => 'other'));
    await clock.runAll();
    expect(seen).toEqual([1, 1, 1]);
    expect(r1).toMatchObject({ ok: true, value: 'done' });
    expect(refused.error).toBeInstanceOf(BulkheadRejectedError);

    const inner = new Bulkhead({ maxConcurrent: 1, clock });
    const outerRetry = pipeline(constant(clock, 10, 3), inner);
    const first = track(
      outerRetry.execute(({ attempt }) => (attempt < 2 ? Promise.reject(new Error('x')) : 'a')),
    );
    await flushMicrotasks();
    expect(inner.inFlight).toBe(0);
    // The permit is free during the delay: another call gets it.
    const second = track(outerRetry.execute(() => 'b'));
    await clock.runAll();
    expect(first).toMatchObject({ ok: true, value: 'a' });
    expect(second).toMatchObject({ ok: true, value: 'b' });
  });

  it('a fallback outermost replaces refusals and timeouts of the policies inside it', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    breaker.trip();
    const p = pipeline(
      fallback({ action: (f) => `fallback for ${(f as { error: Error }).error.name}` }),
      breaker,
    );
    await expect(p.execute(() => 'never')).resolves.toBe('fallback for BrokenCircuitError');
    const q = pipeline(fallback({ value: 'late' }), timeout({ timeout: 10, clock }));
    const r = track(q.execute(({ signal }) => slowFailure(clock, 100, signal)));
    await clock.runAll();
    expect(r).toMatchObject({ ok: true, value: 'late' });
  });
});

describe('one breaker shared by two pipelines', () => {
  it('failures through one pipeline open it for the other; a probe from either closes it for both', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 2 },
      breakDuration: 1_000,
    });
    const a = pipeline(constant(clock, 10, 1), breaker);
    const b = new PipelineBuilder().circuitBreaker(breaker).bulkhead(2).build();

    await expect(a.execute(() => Promise.reject(new Error('a1')))).rejects.toThrow('a1');
    await expect(a.execute(() => Promise.reject(new Error('a2')))).rejects.toThrow('a2');
    let bCalls = 0;
    await expect(b.execute(() => ++bCalls)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(() => b.executeSync(() => ++bCalls)).toThrow(BrokenCircuitError);
    expect(bCalls).toBe(0);

    clock.advance(1_000);
    const probe = deferred<string>();
    const aProbe = track(a.execute(() => probe.promise));
    expect(breaker.state).toBe('half-open');
    // The only probe slot is taken by pipeline a.
    await expect(b.execute(() => ++bCalls)).rejects.toBeInstanceOf(BrokenCircuitError);
    probe.resolve('healthy');
    await flushMicrotasks();
    expect(aProbe).toMatchObject({ ok: true, value: 'healthy' });
    expect(breaker.state).toBe('closed');
    await expect(b.execute(() => ++bCalls)).resolves.toBe(1);
    expect(breaker.stats()).toMatchObject({ failures: 2, successes: 2, rejections: 3 });
  });
});

type Op =
  | { readonly kind: 'ok'; readonly value: number }
  | { readonly kind: 'throw'; readonly message: string }
  | { readonly kind: 'fallback'; readonly message: string }
  | { readonly kind: 'advance'; readonly ms: number };

type Outcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('ok' as const), value: fc.integer({ min: 0, max: 9 }) }),
  fc.record({ kind: fc.constant('throw' as const), message: fc.constantFrom('e1', 'e2') }),
  fc.record({ kind: fc.constant('fallback' as const), message: fc.constantFrom('f1', 'f2') }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 150 }) }),
);

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}:${error.message}` : String(error);
}

describe('execute, tryExecute and executeSync give the same outcomes', () => {
  type Method = 'execute' | 'execute+signal' | 'tryExecute' | 'tryExecute+signal' | 'executeSync';
  const methods: readonly Method[] = [
    'execute',
    'execute+signal',
    'tryExecute',
    'tryExecute+signal',
    'executeSync',
  ];

  function build(clock: ManualClock) {
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 3 },
      breakDuration: 100,
    });
    const p = pipeline(
      fallback({
        action: (f) => `recovered ${((f as { error: Error }).error as Error).message}`,
        handle: (e) => e instanceof Error && e.message.startsWith('f'),
      }),
      breaker,
      bulkhead(2),
    );
    return { p, breaker };
  }

  async function run(p: Pipeline, method: Method, op: Op): Promise<Outcome> {
    const fn = () => {
      if (op.kind === 'ok') return op.value;
      throw new Error((op as { message: string }).message);
    };
    const signal = new AbortController().signal;
    switch (method) {
      case 'executeSync':
        try {
          return { ok: true, value: p.executeSync(fn) };
        } catch (error) {
          return { ok: false, error: describeError(error) };
        }
      case 'execute':
      case 'execute+signal':
        return p.execute(fn, method === 'execute' ? undefined : { signal }).then(
          (value) => ({ ok: true, value }),
          (error) => ({ ok: false, error: describeError(error) }),
        );
      default: {
        const r = await p.tryExecute(fn, method === 'tryExecute' ? undefined : { signal });
        return r.ok ? { ok: true, value: r.value } : { ok: false, error: describeError(r.error) };
      }
    }
  }

  it('for any sequence of values, throws, fallbacks and time passing (breaker + bulkhead + fallback)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 40 }), async (ops) => {
        const setups = methods.map((method) => {
          const clock = new ManualClock();
          return { method, clock, ...build(clock), outcomes: [] as Outcome[] };
        });
        for (const op of ops) {
          for (const s of setups) {
            if (op.kind === 'advance') s.clock.advance(op.ms);
            else s.outcomes.push(await run(s.p, s.method, op));
          }
        }
        const [first, ...rest] = setups;
        for (const s of rest) {
          expect(s.outcomes, s.method).toEqual(first!.outcomes);
          expect(s.breaker.stats(), s.method).toEqual(first!.breaker.stats());
        }
      }),
      { numRuns: 200 },
    );
  });

  it('synchronous throws and rejected promises count the same in a full pipeline', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }), async (failures) => {
        const runOne = async (sync: boolean) => {
          const clock = new ManualClock();
          const breaker = new CircuitBreaker({
            clock,
            window: { kind: 'consecutive', threshold: 4 },
          });
          const r = constant(clock, 5, 3);
          const retries: number[] = [];
          r.onRetry((e) => retries.push(e.attempt));
          const p = pipeline(r, breaker, timeout({ timeout: 100, clock }), bulkhead(1));
          const outcomes: Outcome[] = [];
          for (const fail of failures) {
            const result = track(
              p.execute(() => {
                if (!fail) return sync ? 'v' : Promise.resolve('v');
                const e = new Error('boom');
                if (sync) throw e;
                return Promise.reject(e);
              }),
            );
            await clock.runAll();
            outcomes.push(
              result.ok
                ? { ok: true, value: result.value }
                : { ok: false, error: describeError(result.error) },
            );
          }
          return { outcomes, retries, stats: breaker.stats() };
        };
        expect(await runOne(true)).toEqual(await runOne(false));
      }),
      { numRuns: 100 },
    );
  });
});

describe('executeSync', () => {
  it.each([
    ['retry', () => pipeline(retry())],
    ['timeout', () => pipeline(timeout(100))],
    ['a bulkhead with a queue', () => pipeline(bulkhead({ maxConcurrent: 1, maxQueue: 1 }))],
    ['retry among gates', () => pipeline(new CircuitBreaker(), retry(), bulkhead(1))],
  ])('throws UsageError synchronously for a pipeline with %s, without calling fn', (_, make) => {
    const p = make();
    let calls = 0;
    const thrown = errorOf(UsageError, () => p.executeSync(() => ++calls));
    expect(thrown).toMatchObject({ code: 'ERR_BREAKWATER_USAGE' });
    expect(calls).toBe(0);
  });

  it('says in its UsageError which pipelines it runs, rate limiters without maxWait included', () => {
    expect(() => pipeline(retry()).executeSync(() => 1)).toThrow(
      'executeSync needs a pipeline whose policies never wait (circuit breakers, bulkheads without a queue, rate limiters without `maxWait`, fallbacks); use execute',
    );
    const limiter = rateLimiter({ limit: 1, period: 1_000, clock: new ManualClock() });
    expect(pipeline(limiter).executeSync(() => 3)).toBe(3);
    expect(() => pipeline(limiter).executeSync(() => 4)).toThrow(RateLimitedError);
    const waiting = rateLimiter({ limit: 1, maxWait: 100, clock: new ManualClock() });
    expect(() => pipeline(waiting).executeSync(() => 5)).toThrow(UsageError);
  });

  it('runs pipelines of breakers, bulkheads without a queue and fallbacks (and the empty one)', () => {
    expect(pipeline().executeSync(() => 1)).toBe(1);
    expect(
      pipeline(new CircuitBreaker(), bulkhead(1), fallback({ value: 0 })).executeSync(() => 2),
    ).toBe(2);
    expect(
      pipeline(fallback({ value: 'fb' }), bulkhead(1)).executeSync(() => {
        throw new Error('x');
      }),
    ).toBe('fb');
  });

  it('is re-entrant: a function calling executeSync on the same pipeline nests permits and outcomes', () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 5 } });
    const pool = new Bulkhead(3);
    const p = pipeline(breaker, pool);
    const inFlight: number[] = [];
    const nest = (depth: number): string => {
      inFlight.push(pool.inFlight);
      if (depth === 0) return 'leaf';
      return `${depth}(${p.executeSync(() => nest(depth - 1))})`;
    };
    expect(p.executeSync(() => nest(2))).toBe('2(1(leaf))');
    expect(inFlight).toEqual([1, 2, 3]);
    expect(pool.inFlight).toBe(0);
    expect(breaker.stats()).toMatchObject({ successes: 3, failures: 0 });

    // One level deeper than the bulkhead allows: the innermost call is refused, the outer
    // levels catch the refusal and still succeed.
    const refusals: unknown[] = [];
    const deep = (depth: number): string => {
      if (depth === 0) return 'leaf';
      try {
        return p.executeSync(() => deep(depth - 1));
      } catch (error) {
        refusals.push(error);
        return 'refused';
      }
    };
    expect(deep(4)).toBe('refused');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toBeInstanceOf(BulkheadRejectedError);
    expect(pool.inFlight).toBe(0);

    // An inner failure is recorded even though the outer call catches it and succeeds.
    const result = p.executeSync(() => {
      try {
        p.executeSync(() => {
          throw new Error('inner');
        });
      } catch {
        return 'outer ok';
      }
      return 'unreachable';
    });
    expect(result).toBe('outer ok');
    expect(breaker.stats()).toMatchObject({ successes: 7, failures: 1 });
    expect(pool.inFlight).toBe(0);
  });

  it('with a function returning a promise, keeps the permit and records the outcome when it settles', async () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    const pool = new Bulkhead(1);
    const p = pipeline(breaker, pool);

    const ok = deferred<string>();
    const r1 = p.executeSync(() => ok.promise) as unknown as Promise<string>;
    expect(typeof r1.then).toBe('function');
    expect(pool.inFlight).toBe(1);
    expect(() => p.executeSync(() => 'other')).toThrow(BulkheadRejectedError);
    ok.resolve('value');
    await expect(r1).resolves.toBe('value');
    expect(pool.inFlight).toBe(0);
    expect(breaker.stats()).toMatchObject({ successes: 1, failures: 0, state: 'closed' });

    const bad = deferred<string>();
    const r2 = p.executeSync(() => bad.promise) as unknown as Promise<string>;
    const settled = track(r2);
    await flushMicrotasks();
    expect(breaker.state).toBe('closed');
    bad.reject(new Error('late'));
    await flushMicrotasks();
    expect(settled).toMatchObject({ ok: false, error: { message: 'late' } });
    expect(breaker.stats()).toMatchObject({ failures: 1, state: 'open' });
    expect(pool.inFlight).toBe(0);
  });

  it('a promise returned inside a nested executeSync settles the right level', async () => {
    const pool = new Bulkhead(2);
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 3 } });
    const p = pipeline(breaker, pool);
    const inner = deferred<string>();
    let innerResult: Promise<string> | undefined;
    const outer = p.executeSync(() => {
      innerResult = p.executeSync(() => inner.promise) as unknown as Promise<string>;
      return 'outer';
    });
    expect(outer).toBe('outer');
    expect(pool.inFlight).toBe(1);
    inner.reject(new Error('inner late'));
    await expect(innerResult).rejects.toThrow('inner late');
    expect(pool.inFlight).toBe(0);
    expect(breaker.stats()).toMatchObject({ successes: 1, failures: 1 });
  });
});

describe('synchronous targets through execute', () => {
  it('a sync value resolves through every policy kind', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      fallback({ value: 'fb' }),
      constant(clock, 10, 3),
      new CircuitBreaker({ clock }),
      timeout({ timeout: 100, clock, strategy: 'aggressive' }),
      new Bulkhead({ maxConcurrent: 1, maxQueue: 1, clock }),
    );
    await expect(p.execute(({ attempt }) => `sync ${attempt}`)).resolves.toBe('sync 1');
    expect(clock.pendingTimers).toBeLessThanOrEqual(1);
  });

  it('a synchronous throw is retried, counted by the breaker and replaced by a fallback like a rejection', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 10 } });
    const pool = new Bulkhead(1);
    const events: string[] = [];
    const f = fallback({
      action: (x) => {
        events.push(`fallback ${((x as { error: Error }).error as Error).message}`);
        return 'replaced';
      },
    });
    const p = pipeline(f, constant(clock, 10, 3), breaker, pool);
    const r = track(
      p.execute(({ attempt }): string => {
        events.push(`attempt ${attempt}`);
        throw new Error(`sync ${attempt}`);
      }),
    );
    await clock.runAll();
    expect(r).toMatchObject({ ok: true, value: 'replaced' });
    expect(events).toEqual(['attempt 1', 'attempt 2', 'attempt 3', 'fallback sync 3']);
    expect(breaker.stats().failures).toBe(3);
    expect(pool.inFlight).toBe(0);
  });

  it('a synchronous throw rejects execute with that error (fast path and full path)', async () => {
    const error = new Error('sync');
    const boom = (_: ExecutionContext): never => {
      throw error;
    };
    await expect(pipeline(new CircuitBreaker()).execute(boom)).rejects.toBe(error);
    await expect(
      pipeline(new CircuitBreaker()).execute(boom, { signal: new AbortController().signal }),
    ).rejects.toBe(error);
    await expect(pipeline(retry({ maxAttempts: 1 }), timeout(1_000)).execute(boom)).rejects.toBe(
      error,
    );
    await expect(
      pipeline(timeout({ timeout: 1_000, strategy: 'aggressive' })).execute(boom),
    ).rejects.toBe(error);
  });

  it('a caller signal already aborted rejects with its reason without calling fn', async () => {
    const reason = new Error('caller gone');
    const signal = AbortSignal.abort(reason);
    let calls = 0;
    for (const p of [
      pipeline(),
      pipeline(new CircuitBreaker()),
      pipeline(retry(), timeout(100), bulkhead({ maxConcurrent: 1, maxQueue: 1 })),
      pipeline(timeout({ timeout: 100, strategy: 'aggressive' })),
    ]) {
      await expect(p.execute(() => ++calls, { signal })).rejects.toBe(reason);
    }
    expect(calls).toBe(0);
  });

  it('an attempt-aware sync function sees attempt numbers 1..n', async () => {
    const clock = new ManualClock();
    const p = pipeline(constant(clock, 1, 4), new CircuitBreaker({ clock }));
    const seen: number[] = [];
    const r = track(
      p.execute(({ attempt }) => {
        seen.push(attempt);
        if (attempt < 4) throw new Error('again');
        return 'fourth';
      }),
    );
    await clock.runAll();
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(r).toMatchObject({ ok: true, value: 'fourth' });
  });
});

describe('nested retries around a per-attempt timeout', () => {
  // The "deadline passed" mark of an earlier outer attempt must be cleared, or the inner retry
  // would treat every later attempt as cut by the deadline.
  it('an inner retry keeps retrying on a later outer attempt whose own deadline has not passed', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      constant(clock, 1, 2),
      timeout({ timeout: 50, clock }),
      constant(clock, 1, 5),
    );
    const starts: number[] = [];
    const result = track(
      p.execute((ctx) => {
        starts.push(clock.now());
        // First call outlives the first deadline (it reads its signal, so the pipeline waits
        // for it, but does not stop); every later call fails at once.
        return starts.length === 1 && ctx.signal
          ? slowFailure(clock, 60, new AbortController().signal)
          : Promise.reject(new Error(`fast ${starts.length}`));
      }),
    );
    await clock.runAll();
    // Outer attempt 1: one inner call, cut at 50 (the call ends at 60). Outer attempt 2 starts
    // at 61 with a fresh deadline (111): the inner retry gets all 5 of its attempts.
    expect(starts).toEqual([0, 61, 62, 63, 64, 65]);
    expect(result).toMatchObject({ ok: false, error: { message: 'fast 6' } });
  });
});
