import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  type ExecutionContext,
  type GiveUpEvent,
  isRetryExhaustedError,
  isTimeoutError,
  OptionsError,
  pipeline,
  retry,
  TimeoutError,
  timeout,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred, track, untilAborted } from '../support/async.js';

/** Waits `ms` on the manual clock. */
function sleepOn(clock: ManualClock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}

/** A retry on `clock` that waits exactly `delay` ms between attempts. */
function steadyRetry(clock: ManualClock, maxAttempts: number, delay: number, extra = {}) {
  return retry({ maxAttempts, delay, backoff: 'constant', jitter: 'none', clock, ...extra });
}

describe('execute(fn, { timeout }): one deadline per call', () => {
  it('rejects with a TimeoutError of "execute" at the deadline and aborts the signal', async () => {
    const clock = new ManualClock();
    const p = pipeline(steadyRetry(clock, 3, 10));
    let signal!: AbortSignal;
    const call = track(
      p.execute(
        (ctx) => {
          signal = ctx.signal;
          return untilAborted(ctx);
        },
        { timeout: 100 },
      ),
      clock,
    );
    await clock.advanceAsync(99);
    expect(call.settled).toBe(false);
    expect(signal.aborted).toBe(false);
    await clock.advanceAsync(1);
    await call.done;
    expect(call.ok).toBe(false);
    expect(call.at).toBe(100);
    expect(isTimeoutError(call.error)).toBe(true);
    expect(call.error).toMatchObject({
      policyName: 'execute',
      timeout: 100,
      code: 'ERR_BREAKWATER_TIMEOUT',
    });
    expect((call.error as Error).message).toBe(
      "The call's deadline passed: execute was given 100 ms",
    );
    expect(signal.reason).toBe(call.error);
    expect(clock.pendingTimers).toBe(0);
  });

  it('settles at the deadline when the function ignores its signal, holding permits until the work ends', async () => {
    const clock = new ManualClock();
    const inner = new Bulkhead({ maxConcurrent: 1 });
    const p = pipeline(inner);
    const work = deferred<string>();
    const call = track(
      p.execute(() => work.promise, { timeout: '50ms' }),
      clock,
    );
    await clock.advanceAsync(50);
    await call.done;
    expect(call.at).toBe(50);
    expect(call.error).toBeInstanceOf(TimeoutError);
    // The abandoned work still holds the bulkhead's only permit.
    await expect(p.execute(() => 'second')).rejects.toBeInstanceOf(BulkheadRejectedError);
    work.resolve('late');
    await clock.advanceAsync(0);
    await expect(p.execute(() => 'third')).resolves.toBe('third');
    expect(inner.stats().inFlight).toBe(0);
  });

  it('never lets a retry sleep past the deadline: it gives up at once with reason "deadline"', async () => {
    const clock = new ManualClock();
    const policy = steadyRetry(clock, 10, 100);
    const reasons: GiveUpEvent['reason'][] = [];
    policy.onGiveUp((e) => reasons.push(e.reason));
    const starts: number[] = [];
    const call = track(
      pipeline(policy).execute(
        () => {
          starts.push(clock.now());
          throw new Error(`boom ${starts.length}`);
        },
        { timeout: 250 },
      ),
      clock,
    );
    await clock.advanceAsync(200);
    await call.done;
    // A third delay would end at 300, past 250: the call fails at 200 with the last error.
    expect(starts).toEqual([0, 100, 200]);
    expect(call.at).toBe(200);
    expect((call.error as Error).message).toBe('boom 3');
    expect(reasons).toEqual(['deadline']);
    expect(policy.stats()).toMatchObject({ retries: 2, gaveUp: 1, waiting: 0 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('with lastResult "reject", gives up on a result with a RetryExhaustedError of reason "deadline"', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      steadyRetry(clock, 10, 100, { handleResult: (r: number) => r >= 500, lastResult: 'reject' }),
    );
    const call = track(
      p.execute(() => 503, { timeout: 150 }),
      clock,
    );
    await clock.advanceAsync(100);
    await call.done;
    expect(isRetryExhaustedError(call.error)).toBe(true);
    expect(call.error).toMatchObject({ reason: 'deadline', attempts: 2, result: 503 });
    expect(call.at).toBe(100);
  });

  it('gives each attempt the smaller of its own timeout and the time left', async () => {
    const clock = new ManualClock();
    const p = pipeline(steadyRetry(clock, 3, 100), timeout({ timeout: 1_000, clock }));
    const aborted: [number, unknown][] = [];
    const call = track(
      p.execute(
        (ctx) => {
          ctx.signal.addEventListener('abort', () =>
            aborted.push([clock.now(), ctx.signal.reason]),
          );
          return untilAborted(ctx);
        },
        { timeout: 1_500 },
      ),
      clock,
    );
    await clock.advanceAsync(1_500);
    await call.done;
    expect(aborted.map(([at]) => at)).toEqual([1_000, 1_500]);
    expect(aborted[0]![1]).toMatchObject({ policyName: 'timeout', timeout: 1_000 });
    expect(aborted[1]![1]).toMatchObject({ policyName: 'execute', timeout: 1_500 });
    expect(call.error).toBe(aborted[1]![1]);
    expect(call.at).toBe(1_500);
    await clock.advanceAsync(1_000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('bounds a retry by a timeout policy outside it the same way', async () => {
    const clock = new ManualClock();
    const policy = steadyRetry(clock, 10, 100);
    const reasons: string[] = [];
    policy.onGiveUp((e) => reasons.push(e.reason));
    const p = pipeline(timeout({ timeout: 250, clock }), policy);
    const call = track(
      p.execute(() => Promise.reject(new Error('down'))),
      clock,
    );
    await clock.advanceAsync(200);
    await call.done;
    expect(call.at).toBe(200);
    expect((call.error as Error).message).toBe('down');
    expect(reasons).toEqual(['deadline']);
    // The timeout's shared timer goes when it fires, finding no call left.
    await clock.advanceAsync(50);
    expect(clock.pendingTimers).toBe(0);
  });

  it('does not bound a retry by a timeout inside it, which limits one attempt only', async () => {
    const clock = new ManualClock();
    const p = pipeline(steadyRetry(clock, 3, 100), timeout({ timeout: 50, clock }));
    const starts: number[] = [];
    const call = track(
      p.execute(() => {
        starts.push(clock.now());
        return Promise.reject(new Error('down'));
      }),
      clock,
    );
    await clock.advanceAsync(200);
    await call.done;
    expect(starts).toEqual([0, 100, 200]);
  });

  it('tells the function its deadline and the time left, the same for every attempt', async () => {
    const clock = new ManualClock(1_000);
    const seen: [number, number, number][] = [];
    const p = pipeline(steadyRetry(clock, 2, 40));
    const call = track(
      p.execute(
        async (ctx: ExecutionContext) => {
          seen.push([ctx.attempt, ctx.deadline, ctx.timeLeft]);
          await sleepOn(clock, 20);
          seen.push([ctx.attempt, ctx.deadline, ctx.timeLeft]);
          if (ctx.attempt === 1) throw new Error('again');
          return 'ok';
        },
        { timeout: 300 },
      ),
      clock,
    );
    await clock.advanceAsync(100);
    await call.done;
    expect(call.value).toBe('ok');
    expect(seen).toEqual([
      [1, 1_300, 300],
      [1, 1_300, 280],
      [2, 1_300, 240],
      [2, 1_300, 220],
    ]);
  });

  it('gives no deadline without a timeout, or with Infinity', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    const read = (ctx: ExecutionContext) => [ctx.deadline, ctx.timeLeft];
    await expect(pipeline(breaker).execute(read)).resolves.toEqual([Infinity, Infinity]);
    await expect(pipeline(breaker).execute(read, { timeout: Infinity })).resolves.toEqual([
      Infinity,
      Infinity,
    ]);
    await expect(
      pipeline(steadyRetry(clock, 2, 1)).execute(read, { timeout: 'Infinity' }),
    ).resolves.toEqual([Infinity, Infinity]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("passes the time left on as the next call's timeout", async () => {
    const clock = new ManualClock();
    const outer = pipeline(steadyRetry(clock, 1, 1));
    const inner = pipeline(new CircuitBreaker({ clock }));
    const call = track(
      outer.execute(
        async (ctx) => {
          await sleepOn(clock, 30);
          return inner.execute((c) => untilAborted(c), { timeout: ctx.timeLeft });
        },
        { timeout: 100 },
      ),
      clock,
    );
    await clock.advanceAsync(100);
    await call.done;
    // The inner call was given the 70 ms left at 30: both deadlines fall at 100.
    expect(call.error).toMatchObject({ policyName: 'execute' });
    expect(call.at).toBe(100);
    expect(clock.pendingTimers).toBe(0);
  });

  it('applies to a lone gate, and clears its timer when the call settles first', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    const work = deferred<string>();
    const call = track(
      pipeline(breaker).execute(() => work.promise, { timeout: 500 }),
      clock,
    );
    expect(clock.pendingTimers).toBe(1);
    await clock.advanceAsync(10);
    work.resolve('fast');
    await call.done;
    expect(call.value).toBe('fast');
    expect(clock.pendingTimers).toBe(0);
    expect(breaker.stats().successes).toBe(1);
  });

  it('runs alone too: a policy’s execute takes the same option', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock });
    const call = track(
      breaker.execute((ctx) => untilAborted(ctx), { timeout: 40 }),
      clock,
    );
    await clock.advanceAsync(40);
    await call.done;
    expect(call.error).toBeInstanceOf(TimeoutError);
  });

  it('fails at once without running the function when the timeout is 0', async () => {
    const clock = new ManualClock();
    let ran = false;
    const p = pipeline(steadyRetry(clock, 3, 10));
    const error = await p
      .execute(
        () => {
          ran = true;
        },
        { timeout: 0 },
      )
      .catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(error).toMatchObject({ policyName: 'execute', timeout: 0 });
    expect(await p.tryExecute(() => 1, { timeout: 0 })).toMatchObject({ ok: false });
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects an invalid timeout with an OptionsError naming it, before running anything', async () => {
    const clock = new ManualClock();
    let ran = 0;
    const p = pipeline(steadyRetry(clock, 3, 10));
    for (const bad of [-1, Number.NaN, '5 parsecs', '-2s', null]) {
      const error = await p
        .execute(
          () => {
            ran++;
          },
          { timeout: bad as never },
        )
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).message).toContain('timeout');
      const result = await p.tryExecute(() => ran++, { timeout: bad as never });
      expect(result.ok).toBe(false);
    }
    expect(ran).toBe(0);
  });

  it("ends with the caller's reason when its signal aborts first, leaving no timer", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const breaker = new CircuitBreaker({ clock });
    const call = track(
      pipeline(breaker).execute((ctx) => untilAborted(ctx), {
        timeout: 1_000,
        signal: controller.signal,
      }),
      clock,
    );
    await clock.advanceAsync(10);
    controller.abort(new Error('caller left'));
    await call.done;
    expect((call.error as Error).message).toBe('caller left');
    expect(clock.pendingTimers).toBe(0);
    await clock.advanceAsync(2_000);
    // The caller's own cancellation says nothing about the dependency.
    expect(breaker.stats().failures).toBe(0);
  });

  it('cuts a wait in a bulkhead queue at the deadline', async () => {
    const clock = new ManualClock();
    const bh = new Bulkhead({ maxConcurrent: 1, maxQueue: 1, clock });
    const p = pipeline(bh);
    const first = deferred();
    const holder = track(p.execute(() => first.promise));
    const queued = track(
      p.execute(() => 'queued', { timeout: 30 }),
      clock,
    );
    await clock.advanceAsync(30);
    await queued.done;
    expect(queued.error).toBeInstanceOf(TimeoutError);
    expect(bh.stats()).toMatchObject({ inFlight: 1, queueLength: 0 });
    first.resolve('x');
    await holder.done;
    expect(bh.stats().inFlight).toBe(0);
  });
});
