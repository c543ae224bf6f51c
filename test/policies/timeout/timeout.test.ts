import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  BulkheadRejectedError,
  type ExecuteOptions,
  isTimeoutError,
  type Pipeline,
  pipeline,
  retry,
  systemClock,
  Timeout,
  TimeoutError,
  type TimeoutEvent,
  timeout,
  timeoutDefaults,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track, untilAborted } from '../../support/async.js';

/** A call through `p` whose work the test settles by hand (`work`), and the signal it was given. */
function heldCall(p: Pipeline, options?: ExecuteOptions) {
  const work = deferred();
  let signal!: AbortSignal;
  const outcome = track(
    p.execute((ctx) => {
      signal = ctx.signal;
      return work.promise;
    }, options),
  );
  return { work, outcome, signal };
}

describe('Timeout options', () => {
  it('takes a number as the timeout, with the documented defaults', () => {
    const policy = timeout(250);
    expect(policy.timeout).toBe(250);
    expect(policy.aggressive).toBe(false);
    expect(policy.name).toBe('timeout');
    expect(policy.clock).toBe(systemClock);
    expect(timeoutDefaults).toEqual({ strategy: 'cooperative', name: 'timeout' });
  });

  it('takes an options object', () => {
    const clock = new ManualClock();
    const policy = new Timeout({
      timeout: 7,
      strategy: 'aggressive',
      name: 'db',
      clock,
    });
    expect(policy.timeout).toBe(7);
    expect(policy.aggressive).toBe(true);
    expect(policy.name).toBe('db');
    expect(policy.clock).toBe(clock);
  });

  it('rejects with one stackless TimeoutError naming the policy and the limit', async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ timeout: 100, name: 'db', clock }));
    const a = track(p.execute(untilAborted));
    const b = track(p.execute(untilAborted));
    await clock.advanceAsync(100);
    await a.done;
    await b.done;
    const error = a.error as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(isTimeoutError(error)).toBe(true);
    expect(error.timeout).toBe(100);
    expect(error.policyName).toBe('db');
    expect(error.policy).toBe('timeout');
    expect(error.message).toBe('Timeout "db" passed after 100 ms');
    expect(b.error).toBe(error);
    expect(error.stack).toBe('TimeoutError: Timeout "db" passed after 100 ms');
  });

  it('with debug: true rejects with a fresh error with a stack trace each time', async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ timeout: 100, clock, debug: true }));
    const signals: AbortSignal[] = [];
    const run = () =>
      track(
        p.execute((ctx) => {
          signals.push(ctx.signal);
          return untilAborted(ctx);
        }),
      );
    const a = run();
    const b = run();
    // A synchronous advance makes the deadline fire from this file, so the stack shows it.
    clock.advance(100);
    await a.done;
    await b.done;
    expect(a.error).toBeInstanceOf(TimeoutError);
    expect(b.error).toBeInstanceOf(TimeoutError);
    expect(a.error).not.toBe(b.error);
    expect(signals[0]!.reason).not.toBe(signals[1]!.reason);
    expect((signals[0]!.reason as Error).stack).toContain('timeout.test.ts');
    expect((a.error as Error).stack).toMatch(/\n\s+at /);
  });
});

describe('Timeout cooperative (default)', () => {
  it('aborts the context signal exactly at the deadline with the TimeoutError as reason', async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ timeout: 100, clock }));
    const { work, outcome, signal } = heldCall(p);
    await clock.advanceAsync(99);
    expect(signal.aborted).toBe(false);
    await clock.advanceAsync(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(TimeoutError);
    // Cooperative: the pipeline waits for fn.
    expect(outcome.settled).toBe(false);
    work.reject(new Error('late failure'));
    await outcome.done;
    expect(outcome.error).toBe(signal.reason);
  });

  it('keeps the value of a function that read its signal and fulfils after the deadline', async () => {
    const clock = new ManualClock();
    const work = deferred<string>();
    const outcome = track(
      pipeline(timeout({ timeout: 100, clock })).execute(({ signal }) => {
        signal.addEventListener('abort', () => {});
        return work.promise;
      }),
    );
    await clock.advanceAsync(150);
    expect(outcome.settled).toBe(false);
    work.resolve('late but fine');
    await outcome.done;
    expect(outcome.value).toBe('late but fine');
  });

  it('a function that settles before the deadline is unaffected, and its signal never aborts', async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ timeout: 100, clock }));
    let signal!: AbortSignal;
    const err = new Error('own failure');
    const failed = track(
      p.execute((ctx) => {
        signal = ctx.signal;
        return Promise.reject(err);
      }),
    );
    await failed.done;
    expect(failed.error).toBe(err);
    expect(await p.execute(() => 'sync value')).toBe('sync value');
    await clock.advanceAsync(1000);
    expect(signal.aborted).toBe(false);
  });

  it('a signal first read after the deadline is already aborted', async () => {
    const clock = new ManualClock();
    let read: [boolean, unknown] | undefined;
    const outcome = track(
      pipeline(timeout({ timeout: 100, clock })).execute(
        (ctx) =>
          new Promise((resolve) =>
            clock.setTimer(() => {
              read = [ctx.signal.aborted, ctx.signal.reason];
              resolve('late');
            }, 120),
          ),
      ),
    );
    await clock.advanceAsync(120);
    await outcome.done;
    // Unread at the deadline, so the call did not wait for it.
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    expect(read).toEqual([true, outcome.error]);
  });

  it('emits onTimeout with the timeout and the strategy at each deadline', async () => {
    const clock = new ManualClock();
    const policy = timeout({ timeout: 100, clock });
    const events: [number, TimeoutEvent][] = [];
    const stop = policy.onTimeout((e) => events.push([clock.now(), e]));
    const p = pipeline(policy);
    const a = track(p.execute(untilAborted));
    await clock.advanceAsync(30);
    const b = track(p.execute(untilAborted));
    await clock.advanceAsync(200);
    await Promise.all([a.done, b.done]);
    expect(events).toEqual([
      [100, { timeout: 100, strategy: 'cooperative' }],
      [130, { timeout: 100, strategy: 'cooperative' }],
    ]);
    stop();
    const c = track(p.execute(untilAborted));
    await clock.advanceAsync(100);
    await c.done;
    expect(events).toHaveLength(2);
  });

  it("aborting the caller's signal aborts context.signal with the caller's reason", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    let signal!: AbortSignal;
    const outcome = track(
      pipeline(timeout({ timeout: 100, clock })).execute(
        (ctx) => {
          signal = ctx.signal;
          return untilAborted(ctx);
        },
        { signal: controller.signal },
      ),
    );
    await clock.advanceAsync(10);
    expect(signal.aborted).toBe(false);
    controller.abort('user cancelled');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('user cancelled');
    await outcome.done;
    expect(outcome.error).toBe('user cancelled');
  });

  // The deadline of a call its caller already cancelled must not turn the caller's reason into
  // a TimeoutError, which an outer breaker would then count.
  it('the deadline after a caller abort does not replace the caller reason', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const work = deferred();
    const outcome = track(
      pipeline(timeout({ timeout: 100, clock })).execute(() => work.promise, {
        signal: controller.signal,
      }),
    );
    controller.abort('user cancelled');
    await clock.advanceAsync(200);
    work.reject('user cancelled');
    await outcome.done;
    expect(outcome.error).toBe('user cancelled');
  });
});

describe('Timeout cooperative, around a function that never reads its signal', () => {
  it('rejects at the deadline, as aggressive does, while the work goes on', async () => {
    const clock = new ManualClock();
    const policy = timeout({ timeout: 100, clock });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((e) => events.push(e));
    const work = deferred<string>();
    const outcome = track(pipeline(policy).execute(() => work.promise));
    await clock.advanceAsync(99);
    expect(outcome.settled).toBe(false);
    await clock.advanceAsync(1);
    expect(outcome.settled).toBe(true);
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    expect(events).toEqual([{ timeout: 100, strategy: 'cooperative' }]);
    // The late result is dropped; a late rejection would be observed (the setup file checks).
    work.resolve('too late');
    await clock.advanceAsync(0);
    expect(outcome.error).toBeInstanceOf(TimeoutError);
  });

  it('observes the late rejection of the work it stopped waiting for', async () => {
    const clock = new ManualClock();
    const work = deferred();
    const outcome = track(pipeline(timeout({ timeout: 100, clock })).execute(() => work.promise));
    await clock.advanceAsync(100);
    await outcome.done;
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    work.reject(new Error('late rejection'));
    await clock.advanceAsync(0);
  });

  it('a bulkhead inside keeps its permit until the work really ends', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(timeout({ timeout: 100, clock }), pool);
    const work = deferred();
    const first = track(p.execute(() => work.promise));
    await clock.advanceAsync(100);
    await first.done;
    expect(first.error).toBeInstanceOf(TimeoutError);
    expect(pool.inFlight).toBe(1);
    work.resolve('done at last');
    await clock.advanceAsync(0);
    expect(pool.inFlight).toBe(0);
  });

  it('waits for a function that read its signal after an await, before the deadline', async () => {
    const clock = new ManualClock();
    const work = deferred<string>();
    let aborted: boolean | undefined;
    const outcome = track(
      pipeline(timeout({ timeout: 100, clock })).execute(async (ctx) => {
        await new Promise<void>((resolve) => clock.setTimer(resolve, 10));
        const { signal } = ctx;
        signal.addEventListener('abort', () => {
          aborted = signal.aborted;
        });
        return work.promise;
      }),
    );
    await clock.advanceAsync(100);
    expect(aborted).toBe(true);
    expect(outcome.settled).toBe(false);
    work.resolve('late but fine');
    await outcome.done;
    expect(outcome.value).toBe('late but fine');
  });

  it('a retry outside starts its next attempt at the deadline of the ignored one', async () => {
    const clock = new ManualClock();
    const starts: number[] = [];
    const p = pipeline(
      retry({ maxAttempts: 3, delay: 0, clock }),
      timeout({ timeout: 100, clock }),
    );
    const outcome = track(
      p.execute(({ attempt }) => {
        starts.push(clock.now());
        return attempt < 3 ? new Promise(() => {}) : 'third';
      }),
    );
    await clock.advanceAsync(200);
    await outcome.done;
    expect(outcome.value).toBe('third');
    expect(starts).toEqual([0, 100, 200]);
  });

  it('tryExecute resolves with the TimeoutError at the deadline', async () => {
    const clock = new ManualClock();
    const result = track(
      pipeline(timeout({ timeout: 100, clock })).tryExecute(() => new Promise(() => {})),
    );
    await clock.advanceAsync(100);
    await result.done;
    const settled = result.value as { ok: boolean; error: unknown };
    expect(settled.ok).toBe(false);
    expect(settled.error).toBeInstanceOf(TimeoutError);
  });

  it("a caller abort rejects at once with the caller's reason", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const work = deferred();
    const outcome = track(
      pipeline(timeout({ timeout: 100, clock })).execute(() => work.promise, {
        signal: controller.signal,
      }),
    );
    await clock.advanceAsync(10);
    controller.abort('stop');
    await outcome.done;
    expect(outcome.error).toBe('stop');
    work.reject(new Error('late'));
    await clock.advanceAsync(0);
  });

  it('a synchronous function is never cut short: it already ended', async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ timeout: 100, clock }));
    expect(await p.execute(() => 'now')).toBe('now');
  });
});

describe('Timeout aggressive', () => {
  it('rejects at the deadline while fn is still pending, and aborts its signal', async () => {
    const clock = new ManualClock();
    const policy = timeout({ timeout: 100, strategy: 'aggressive', clock });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((e) => events.push(e));
    const { work, outcome, signal } = heldCall(pipeline(policy));
    await clock.advanceAsync(99);
    expect(outcome.settled).toBe(false);
    await clock.advanceAsync(1);
    expect(outcome.settled).toBe(true);
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(outcome.error);
    expect(events).toEqual([{ timeout: 100, strategy: 'aggressive' }]);
    // The abandoned work's late rejection is observed: the setup file fails the test otherwise.
    work.reject(new Error('late rejection'));
    await clock.advanceAsync(0);
  });

  it('a late fulfilment of abandoned work changes nothing', async () => {
    const clock = new ManualClock();
    const work = deferred<string>();
    const outcome = track(
      pipeline(timeout({ timeout: 100, strategy: 'aggressive', clock })).execute(
        () => work.promise,
      ),
    );
    await clock.advanceAsync(100);
    work.resolve('too late');
    await outcome.done;
    await clock.advanceAsync(0);
    expect(outcome.error).toBeInstanceOf(TimeoutError);
  });

  it('a bulkhead inside keeps its permit until the abandoned work settles', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(timeout({ timeout: 100, strategy: 'aggressive', clock }), pool);
    const work = deferred();
    const first = track(p.execute(() => work.promise));
    expect(pool.inFlight).toBe(1);
    await clock.advanceAsync(100);
    await first.done;
    expect(first.error).toBeInstanceOf(TimeoutError);
    expect(pool.inFlight).toBe(1);

    const refused = track(p.execute(() => 'unreached'));
    await refused.done;
    expect(refused.error).toBeInstanceOf(BulkheadRejectedError);

    work.reject(new Error('finally gave up'));
    await clock.advanceAsync(0);
    expect(pool.inFlight).toBe(0);
    expect(await p.execute(() => 'admitted')).toBe('admitted');
  });

  it("a caller abort rejects at once with the caller's reason while fn is still pending", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const { work, outcome, signal } = heldCall(
      pipeline(timeout({ timeout: 100, strategy: 'aggressive', clock })),
      { signal: controller.signal },
    );
    await clock.advanceAsync(10);
    controller.abort('stop');
    await outcome.done;
    expect(outcome.error).toBe('stop');
    expect(signal.reason).toBe('stop');
    work.reject(new Error('late'));
    await clock.advanceAsync(200);
  });
});

describe('Timeout shared timer', () => {
  it('1000 calls in flight share one timer, and their deadlines fire in call order', async () => {
    const clock = new ManualClock();
    const policy = timeout({ timeout: 100, clock });
    const p = pipeline(policy);
    const abortedAt: number[] = [];
    const order: number[] = [];
    const outcomes: ReturnType<typeof track>[] = [];
    for (let i = 0; i < 1000; i++) {
      if (i % 10 === 0 && i > 0) await clock.advanceAsync(1);
      outcomes.push(
        track(
          p.execute(({ signal }) => {
            signal.addEventListener('abort', () => {
              abortedAt.push(clock.now());
              order.push(i);
            });
            return untilAborted({
              signal,
              attempt: 1,
              deadline: Infinity,
              timeLeft: Infinity,
              hedge: 0,
            });
          }),
        ),
      );
      expect(clock.pendingTimers).toBe(1);
    }
    expect(clock.now()).toBe(99);
    expect(policy.pending).toBe(1000);
    await clock.advanceAsync(200);
    await Promise.all(outcomes.map((o) => o.done));
    expect(order).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(abortedAt).toEqual(Array.from({ length: 1000 }, (_, i) => Math.floor(i / 10) + 100));
    expect(outcomes.every((o) => o.error instanceof TimeoutError)).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    expect(policy.pending).toBe(0);
  });

  it('calls that finish early are dropped without firing, and the timer ends with them', async () => {
    const clock = new ManualClock();
    const policy = timeout({ timeout: 100, clock });
    const p = pipeline(policy);
    const works = [deferred(), deferred(), deferred()];
    const outcomes = works.map((w) => track(p.execute(() => w.promise)));
    expect(policy.pending).toBe(3);
    for (const [i, w] of works.entries()) w.resolve(i);
    await Promise.all(outcomes.map((o) => o.done));
    expect(outcomes.map((o) => o.value)).toEqual([0, 1, 2]);
    expect(policy.pending).toBe(0);
    await clock.advanceAsync(100);
    expect(clock.pendingTimers).toBe(0);
  });

  it('dispose() cancels the timer; calls in flight then no longer time out', async () => {
    const clock = new ManualClock();
    const policy = timeout({ timeout: 100, clock });
    const events: TimeoutEvent[] = [];
    policy.onTimeout((e) => events.push(e));
    const { work, outcome, signal } = heldCall(pipeline(policy));
    expect(clock.pendingTimers).toBe(1);
    policy.dispose();
    expect(clock.pendingTimers).toBe(0);
    expect(policy.pending).toBe(0);
    await clock.advanceAsync(1000);
    expect(signal.aborted).toBe(false);
    work.resolve('finished');
    await outcome.done;
    expect(outcome.value).toBe('finished');
    expect(events).toEqual([]);
  });

  it('keeps working after dispose()', async () => {
    const clock = new ManualClock();
    const policy = timeout({ timeout: 100, clock });
    policy.dispose();
    const outcome = track(pipeline(policy).execute(untilAborted));
    await clock.advanceAsync(100);
    await outcome.done;
    expect(outcome.error).toBeInstanceOf(TimeoutError);
  });
});
