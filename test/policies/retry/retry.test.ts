import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  type ExecutionContext,
  type GiveUpEvent,
  type Pushback,
  pipeline,
  type RetryEvent,
  RetryExhaustedError,
  type RetryOptions,
  retry,
  setListenerErrorHandler,
  Timeout,
  TimeoutError,
  UsageError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';

/** Retry options with exact, jitter-free delays on `clock`. */
function exact(clock: ManualClock, extra: RetryOptions = {}): RetryOptions {
  return { clock, backoff: 'constant', delay: 100, jitter: 'none', ...extra };
}

/** Fires every timer of `clock` until none is left, then waits for `promise`: how it settled. */
async function runOut<T>(clock: ManualClock, promise: Promise<T>) {
  const outcome = track(promise);
  await clock.runAll();
  await outcome.done;
  return outcome;
}

function record(policy: ReturnType<typeof retry>) {
  const retries: RetryEvent[] = [];
  const giveUps: GiveUpEvent[] = [];
  policy.onRetry((e) => retries.push(e));
  policy.onGiveUp((e) => giveUps.push(e));
  return { retries, giveUps };
}

describe('Retry attempts', () => {
  it.each([1, 2, 5])('maxAttempts %i makes exactly that many calls', async (maxAttempts) => {
    const clock = new ManualClock();
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(retry(exact(clock, { maxAttempts }))).execute(() => {
        calls++;
        throw new Error(`fail ${calls}`);
      }),
    );
    expect(calls).toBe(maxAttempts);
    expect(outcome.ok).toBe(false);
    expect((outcome.error as Error).message).toBe(`fail ${maxAttempts}`);
  });

  it('maxAttempts 1 never sets a timer', async () => {
    const clock = new ManualClock();
    const result = pipeline(retry(exact(clock, { maxAttempts: 1 }))).tryExecute(() => {
      throw new Error('boom');
    });
    expect(clock.pendingTimers).toBe(0);
    expect((await result).ok).toBe(false);
  });

  it('resolves with the value of the first attempt that succeeds', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 5 }));
    const { retries, giveUps } = record(policy);
    const outcome = await runOut(
      clock,
      pipeline(policy).execute(({ attempt }) => {
        if (attempt < 3) throw new Error(`fail ${attempt}`);
        return `ok at ${attempt}`;
      }),
    );
    expect(outcome.value).toBe('ok at 3');
    expect(retries.map((e) => e.attempt)).toEqual([1, 2]);
    expect(giveUps).toEqual([]);
  });

  it('context.attempt counts 1, 2, 3 across attempts, for sync and async failures', async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    await runOut(
      clock,
      pipeline(retry(exact(clock, { maxAttempts: 4 }))).execute((ctx: ExecutionContext) => {
        seen.push(ctx.attempt);
        if (ctx.attempt % 2 === 0) return Promise.reject(new Error('async'));
        throw new Error('sync');
      }),
    );
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('maxAttempts Infinity keeps retrying until maxDuration stops it', async () => {
    const clock = new ManualClock();
    const policy = retry(
      exact(clock, { maxAttempts: Number.POSITIVE_INFINITY, maxDuration: 1000 }),
    );
    const { giveUps } = record(policy);
    const starts: number[] = [];
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        starts.push(clock.now());
        throw new Error('boom');
      }),
    );
    // The attempt at 900 would need a retry at 900 + 100 = 1000 >= maxDuration.
    expect(starts).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
    expect(giveUps).toEqual([{ attempts: 10, error: expect.any(Error), reason: 'max-duration' }]);
  });

  it('has no time limit by default (maxDuration Infinity)', async () => {
    const clock = new ManualClock();
    let calls = 0;
    await runOut(
      clock,
      pipeline(retry(exact(clock, { maxAttempts: 40, delay: 100_000_000 }))).execute(() => {
        calls++;
        throw new Error('boom');
      }),
    );
    expect(calls).toBe(40);
    expect(clock.now()).toBe(39 * 100_000_000);
  });
});

describe('Retry maxDuration', () => {
  it.each([
    [250, [0, 100, 200]],
    [300, [0, 100, 200]],
    [301, [0, 100, 200, 300]],
  ])(
    'maxDuration %i: no retry starts once elapsed + delay >= maxDuration',
    async (maxDuration, expected) => {
      const clock = new ManualClock();
      const policy = retry(exact(clock, { maxAttempts: 10, maxDuration }));
      const { giveUps } = record(policy);
      const starts: number[] = [];
      await runOut(
        clock,
        pipeline(policy).execute(() => {
          starts.push(clock.now());
          throw new Error('boom');
        }),
      );
      expect(starts).toEqual(expected);
      expect(giveUps.map((e) => [e.attempts, e.reason])).toEqual([
        [expected.length, 'max-duration'],
      ]);
    },
  );

  it('counts the time spent inside attempts, measured from the first attempt start', async () => {
    const clock = new ManualClock(5_000);
    const policy = retry(exact(clock, { maxAttempts: 10, maxDuration: 300 }));
    const { giveUps } = record(policy);
    const starts: number[] = [];
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        starts.push(clock.now());
        return new Promise((_, reject) => clock.setTimer(() => reject(new Error('slow')), 150));
      }),
    );
    // Attempt 1 ends at +150 (150 + 100 < 300, retry at +250); attempt 2 ends at +400.
    expect(starts).toEqual([5_000, 5_250]);
    expect(giveUps[0]!.reason).toBe('max-duration');
  });
});

describe('Retry handle', () => {
  it('retries only the errors handle accepts and passes it each error', async () => {
    const clock = new ManualClock();
    class Transient extends Error {}
    const seenByHandle: unknown[] = [];
    const policy = retry(
      exact(clock, {
        maxAttempts: 5,
        handle: (e) => {
          seenByHandle.push(e);
          return e instanceof Transient;
        },
      }),
    );
    const { giveUps } = record(policy);
    const fatal = new Error('fatal');
    const errors = [new Transient('t1'), new Transient('t2'), fatal];
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(policy).execute(() => {
        throw errors[calls++];
      }),
    );
    expect(calls).toBe(3);
    expect(seenByHandle).toEqual(errors);
    expect(outcome.error).toBe(fatal);
    expect(giveUps).toEqual([{ attempts: 3, error: fatal, reason: 'not-handled' }]);
  });

  it('never retries an open breaker, even when handle accepts every error', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    breaker.trip();
    const policy = retry(exact(clock, { handle: () => true }));
    const { retries, giveUps } = record(policy);
    const outcome = await runOut(
      clock,
      pipeline(policy, breaker).execute(() => 'unreached'),
    );
    expect(outcome.error).toBeInstanceOf(BrokenCircuitError);
    expect(retries).toEqual([]);
    expect(giveUps.map((e) => e.reason)).toEqual(['not-handled']);
  });

  it('never retries a full bulkhead', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, clock });
    const gate = deferred();
    const holder = track(pipeline(pool).execute(() => gate.promise));
    const policy = retry(exact(clock));
    const { giveUps } = record(policy);
    const outcome = await runOut(
      clock,
      pipeline(policy, pool).execute(() => 'unreached'),
    );
    expect(outcome.error).toBeInstanceOf(BulkheadRejectedError);
    expect(giveUps).toEqual([{ attempts: 1, error: outcome.error, reason: 'not-handled' }]);
    gate.resolve('done');
    await holder.done;
  });

  it('retries a timeout by default, each attempt with a fresh, unaborted signal', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 3 }));
    const { retries } = record(policy);
    const abortedAtStart: boolean[] = [];
    const outcome = await runOut(
      clock,
      pipeline(policy, new Timeout({ timeout: 50, clock })).execute(({ signal, attempt }) => {
        abortedAtStart.push(signal.aborted);
        if (attempt === 3) return 'third time lucky';
        return new Promise((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason));
        });
      }),
    );
    expect(outcome.value).toBe('third time lucky');
    expect(abortedAtStart).toEqual([false, false, false]);
    expect(retries.map((e) => e.error)).toEqual([
      expect.any(TimeoutError),
      expect.any(TimeoutError),
    ]);
  });
});

describe('Retry handleResult', () => {
  it('retries results handleResult calls failures, and resolves with the last one when attempts run out', async () => {
    const clock = new ManualClock();
    const policy = retry(
      exact(clock, { handleResult: (r) => (r as { status: number }).status === 503 }),
    );
    const { retries, giveUps } = record(policy);
    const responses = [{ status: 503 }, { status: 503 }, { status: 503 }];
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(policy).execute(() => responses[calls++]),
    );
    expect(calls).toBe(3);
    expect(outcome.ok).toBe(true);
    expect(outcome.value).toBe(responses[2]);
    expect(retries).toStrictEqual([
      { attempt: 1, delay: 100, result: responses[0] },
      { attempt: 2, delay: 100, result: responses[1] },
    ]);
    expect(giveUps).toStrictEqual([{ attempts: 3, result: responses[2], reason: 'max-attempts' }]);
  });

  it('returns a result handleResult accepts at once', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(retry(exact(clock, { handleResult: (r) => r === 'retry me' }))).execute(() => {
        calls++;
        return calls === 1 ? 'retry me' : 'fine';
      }),
    );
    expect(outcome.value).toBe('fine');
    expect(calls).toBe(2);
  });

  it('does not retry results by default', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const value = await pipeline(retry(exact(clock))).execute(() => {
      calls++;
      return { status: 503 };
    });
    expect(value).toEqual({ status: 503 });
    expect(calls).toBe(1);
  });
});

describe('Retry retryAfter (pushback)', () => {
  it('waits the pushback when it is longer than the backoff: the pushback is the least delay', async () => {
    const clock = new ManualClock();
    const failures: unknown[] = [];
    const policy = retry({
      clock,
      delay: 100,
      jitter: 'full',
      random: () => 0.5,
      retryAfter: (failure) => {
        failures.push(failure);
        return 1234;
      },
    });
    const { retries } = record(policy);
    const starts: number[] = [];
    const err = new Error('429');
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        starts.push(clock.now());
        throw err;
      }),
    );
    expect(retries.map((e) => e.delay)).toEqual([1234, 1234]);
    expect(starts).toEqual([0, 1234, 2468]);
    expect(failures).toStrictEqual([{ error: err }, { error: err }]);
  });

  it('waits the backoff, jitter included, when it is longer than the pushback', async () => {
    const clock = new ManualClock();
    // Exponential from 1000 with equal jitter at 0.5: 750, then 1500.
    const policy = retry({
      clock,
      delay: 1000,
      jitter: 'equal',
      random: () => 0.5,
      retryAfter: () => 800,
    });
    const { retries } = record(policy);
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        throw new Error('x');
      }),
    );
    expect(retries.map((e) => e.delay)).toEqual([800, 1500]);
  });

  it('hands retryAfter the result when a result is retried', async () => {
    const clock = new ManualClock();
    const failures: unknown[] = [];
    const policy = retry(
      exact(clock, {
        maxAttempts: 2,
        handleResult: () => true,
        retryAfter: (f) => {
          failures.push(f);
          return 700;
        },
      }),
    );
    const { retries } = record(policy);
    await runOut(
      clock,
      pipeline(policy).execute(() => 'busy'),
    );
    expect(failures).toStrictEqual([{ result: 'busy' }]);
    expect(retries.map((e) => e.delay)).toEqual([700]);
  });

  it.each([
    ['undefined', undefined],
    ['a negative number', -5],
    ['NaN', Number.NaN],
    ['a string', '500'],
    ['0', 0],
  ])('waits the backoff alone when retryAfter returns %s', async (_label, pushed) => {
    const clock = new ManualClock();
    const policy = retry(
      exact(clock, { maxAttempts: 2, retryAfter: () => pushed as number | undefined }),
    );
    const { retries } = record(policy);
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        throw new Error('x');
      }),
    );
    expect(retries.map((e) => e.delay)).toEqual([100]);
  });

  it('waits exactly maxDelay for a pushback of maxDelay', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 2, maxDelay: 5000, retryAfter: () => 5000 }));
    const { retries, giveUps } = record(policy);
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        throw new Error('x');
      }),
    );
    expect(retries.map((e) => e.delay)).toEqual([5000]);
    expect(giveUps.map((e) => e.reason)).toEqual(['max-attempts']);
  });

  it.each<[string, Pushback]>([
    ['false (do not retry)', false],
    ['a delay above maxDelay', 5001],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('gives up at once with reason pushback when retryAfter returns %s', async (_label, pushed) => {
    const clock = new ManualClock();
    const policy = retry(
      exact(clock, { maxAttempts: 5, maxDelay: 5000, retryAfter: () => pushed }),
    );
    const { retries, giveUps } = record(policy);
    const err = new Error('x');
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(policy).execute(() => {
        calls++;
        throw err;
      }),
    );
    expect(calls).toBe(1);
    expect(outcome.error).toBe(err);
    expect(retries).toEqual([]);
    expect(giveUps).toEqual([{ attempts: 1, error: err, reason: 'pushback' }]);
    expect(policy.stats().gaveUp).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('gives up with pushback after retries, when a later attempt says not to retry', async () => {
    const clock = new ManualClock();
    const answers: Pushback[] = [200, false];
    const policy = retry(exact(clock, { maxAttempts: 5, retryAfter: () => answers.shift() }));
    const { retries, giveUps } = record(policy);
    let calls = 0;
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        calls++;
        throw new Error('x');
      }),
    );
    expect(calls).toBe(2);
    expect(retries.map((e) => e.delay)).toEqual([200]);
    expect(giveUps.map((e) => [e.attempts, e.reason])).toEqual([[2, 'pushback']]);
  });

  it("rejects a retried result with a RetryExhaustedError of reason 'pushback'", async () => {
    const clock = new ManualClock();
    const policy = retry(
      exact(clock, {
        maxAttempts: 5,
        handleResult: () => true,
        lastResult: 'reject',
        retryAfter: () => false,
      }),
    );
    const outcome = await runOut(
      clock,
      pipeline(policy).execute(() => 'busy'),
    );
    expect(outcome.error).toBeInstanceOf(RetryExhaustedError);
    expect(outcome.error).toMatchObject({ reason: 'pushback', attempts: 1, result: 'busy' });
  });

  it('gives up with max-duration when the pushback would end past maxDuration', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxDuration: 1000, retryAfter: () => 1000 }));
    const { retries, giveUps } = record(policy);
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        throw new Error('x');
      }),
    );
    expect(retries).toEqual([]);
    expect(giveUps.map((e) => e.reason)).toEqual(['max-duration']);
  });
});

describe('Retry events', () => {
  it('onRetry reports the failed attempt, the delay and the error', async () => {
    const clock = new ManualClock();
    const policy = retry({ clock, delay: 10, jitter: 'none', maxAttempts: 3 });
    const { retries, giveUps } = record(policy);
    const errors = [new Error('1'), new Error('2'), new Error('3')];
    let calls = 0;
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        throw errors[calls++];
      }),
    );
    expect(retries).toStrictEqual([
      { attempt: 1, delay: 10, error: errors[0] },
      { attempt: 2, delay: 20, error: errors[1] },
    ]);
    expect(giveUps).toStrictEqual([{ attempts: 3, error: errors[2], reason: 'max-attempts' }]);
  });

  it('emits onRetry before the delay starts', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 2 }));
    const timersAtEvent: number[] = [];
    policy.onRetry(() => timersAtEvent.push(clock.pendingTimers));
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        throw new Error('x');
      }),
    );
    expect(timersAtEvent).toEqual([0]);
  });

  it('the disposer returned by onRetry / onGiveUp stops that listener only', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 3 }));
    const kept: number[] = [];
    const dropped: number[] = [];
    policy.onRetry((e) => kept.push(e.attempt));
    const stop = policy.onRetry((e) => dropped.push(e.attempt));
    const gaveUp: string[] = [];
    const stopGiveUp = policy.onGiveUp((e) => gaveUp.push(e.reason));
    stopGiveUp();
    stopGiveUp();
    let calls = 0;
    await runOut(
      clock,
      pipeline(policy).execute(() => {
        if (++calls === 2) stop();
        throw new Error('x');
      }),
    );
    expect(kept).toEqual([1, 2]);
    expect(dropped).toEqual([1]);
    expect(gaveUp).toEqual([]);
  });

  it('a throwing onRetry listener does not break the retry', async () => {
    const clock = new ManualClock();
    const reported: unknown[] = [];
    setListenerErrorHandler((e) => reported.push(e));
    try {
      const policy = retry(exact(clock, { maxAttempts: 2 }));
      const oops = new Error('listener');
      policy.onRetry(() => {
        throw oops;
      });
      let calls = 0;
      const outcome = await runOut(
        clock,
        pipeline(policy).execute(() => {
          calls++;
          if (calls === 1) throw new Error('x');
          return 'ok';
        }),
      );
      expect(outcome.value).toBe('ok');
      expect(reported).toEqual([oops]);
    } finally {
      setListenerErrorHandler((e) => console.error('breakwater: an event listener threw', e));
    }
  });
});

describe('Retry cancellation', () => {
  it('a caller abort during a delay rejects at once with the reason, and nothing else runs', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 5, delay: 1000 }));
    const controller = new AbortController();
    let calls = 0;
    const outcome = track(
      pipeline(policy).execute(
        () => {
          calls++;
          throw new Error('x');
        },
        { signal: controller.signal },
      ),
    );
    await clock.advanceAsync(500);
    expect(calls).toBe(1);
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await outcome.done;
    expect(outcome.error).toBe(reason);
    expect(clock.now()).toBe(500);
    expect(clock.pendingTimers).toBe(0);
    await clock.advanceAsync(10_000);
    expect(calls).toBe(1);
  });

  it('an abort while an attempt is in flight stops retrying with reason "aborted"', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 5 }));
    const { retries, giveUps } = record(policy);
    const controller = new AbortController();
    let calls = 0;
    const outcome = track(
      pipeline(policy).execute(
        ({ signal }) => {
          calls++;
          return new Promise((_, reject) => {
            signal.addEventListener('abort', () => reject(signal.reason));
          });
        },
        { signal: controller.signal },
      ),
    );
    await clock.advanceAsync(10);
    controller.abort('stop');
    await outcome.done;
    await clock.runAll();
    expect(outcome.error).toBe('stop');
    expect(calls).toBe(1);
    expect(retries).toEqual([]);
    expect(giveUps).toStrictEqual([{ attempts: 1, error: 'stop', reason: 'aborted' }]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('an already aborted signal rejects with its reason without calling fn', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    controller.abort('early');
    let calls = 0;
    await expect(
      pipeline(retry(exact(clock))).execute(
        () => {
          calls++;
        },
        { signal: controller.signal },
      ),
    ).rejects.toBe('early');
    expect(calls).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('gives up at once (reason "deadline") rather than wait a delay past an outer timeout', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 5, delay: 100 }));
    const { giveUps } = record(policy);
    let calls = 0;
    const outcome = track(
      pipeline(new Timeout({ timeout: 150, clock }), policy).execute(() => {
        calls++;
        throw new Error('x');
      }),
      clock,
    );
    await clock.advanceAsync(100);
    await outcome.done;
    // The second attempt fails at 100; a delay ending at 200 would pass the deadline at 150.
    expect(outcome.error).not.toBeInstanceOf(TimeoutError);
    expect(outcome.at).toBe(100);
    expect(calls).toBe(2);
    expect(giveUps.map((e) => e.reason)).toEqual(['deadline']);
    await clock.runAll();
    expect(calls).toBe(2);
    expect(clock.pendingTimers).toBe(0);
  });

  it('an outer timeout passing during an attempt stops the retry with reason "aborted"', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { maxAttempts: 5 }));
    const { giveUps } = record(policy);
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(new Timeout({ timeout: 50, clock }), policy).execute(({ signal }) => {
        calls++;
        return new Promise((_, reject) => {
          signal.addEventListener('abort', () => reject(new Error('aborted by signal')));
        });
      }),
    );
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    expect(calls).toBe(1);
    expect(giveUps.map((e) => e.reason)).toEqual(['aborted']);
  });

  it('dispose() fails executions waiting out a delay with UsageError and leaves no timer', async () => {
    const clock = new ManualClock();
    const policy = retry(exact(clock, { name: 'orders', maxAttempts: 3 }));
    const events: number[] = [];
    policy.onRetry((e) => events.push(e.attempt));
    let calls = 0;
    const p = pipeline(policy);
    const fail = () => {
      calls++;
      throw new Error('x');
    };
    const a = track(p.execute(fail));
    const b = track(p.execute(fail));
    await clock.advanceAsync(0);
    expect(clock.pendingTimers).toBe(2);
    policy.dispose();
    await a.done;
    await b.done;
    expect(a.error).toBeInstanceOf(UsageError);
    expect((a.error as Error).message).toContain('"orders"');
    expect(b.error).toBeInstanceOf(UsageError);
    expect(clock.pendingTimers).toBe(0);
    expect(calls).toBe(2);

    // Still usable; the listeners are gone.
    await runOut(clock, p.execute(fail));
    expect(calls).toBe(5);
    expect(events).toEqual([1, 1]);
  });
});
