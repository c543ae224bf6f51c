import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  ErrorCode,
  isPolicyRejection,
  isRetryExhaustedError,
  OptionsError,
  pipeline,
  RetryExhaustedError,
  type RetryOptions,
  retry,
  retryDefaults,
  Timeout,
  TimeoutError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';

interface Reply {
  readonly status: number;
}

/** Retry options with exact, jitter-free delays of 100 ms on `clock`, retrying 503 replies. */
function on503(clock: ManualClock, extra: RetryOptions<Reply> = {}): RetryOptions<Reply> {
  return {
    clock,
    backoff: 'constant',
    delay: 100,
    jitter: 'none',
    handleResult: (r) => r.status === 503,
    ...extra,
  };
}

/** Fires every timer of `clock` until none is left, then waits for `promise`: how it settled. */
async function runOut<T>(clock: ManualClock, promise: Promise<T>) {
  const outcome = track(promise);
  await clock.runAll();
  await outcome.done;
  return outcome;
}

describe('Retry lastResult', () => {
  it('resolves with the last result when retries run out, by default', async () => {
    expect(retryDefaults.lastResult).toBe('resolve');
    const clock = new ManualClock();
    const replies = [{ status: 503 }, { status: 503 }, { status: 503 }];
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(retry(on503(clock))).execute(() => replies[calls++]!),
    );
    expect(calls).toBe(3);
    expect(outcome.ok).toBe(true);
    expect(outcome.value).toBe(replies[2]);
  });

  it("'reject' retries a 503 three times, then rejects with a RetryExhaustedError carrying the last response", async () => {
    const clock = new ManualClock();
    const replies = [{ status: 503 }, { status: 503 }, { status: 503 }];
    const starts: number[] = [];
    const giveUps: unknown[] = [];
    const policy = retry(on503(clock, { lastResult: 'reject', name: 'upstream' }));
    policy.onGiveUp((e) => giveUps.push(e));
    const outcome = await runOut(
      clock,
      pipeline(policy).execute(() => {
        starts.push(clock.now());
        return replies[starts.length - 1]!;
      }),
    );
    expect(starts).toEqual([0, 100, 200]);
    expect(outcome.ok).toBe(false);
    const error = outcome.error as RetryExhaustedError<Reply>;
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect(isRetryExhaustedError(error)).toBe(true);
    expect(isPolicyRejection(error)).toBe(true);
    expect(error.code).toBe(ErrorCode.RetryExhausted);
    expect(error.result).toBe(replies[2]);
    expect([error.attempts, error.reason]).toEqual([3, 'max-attempts']);
    expect([error.policy, error.policyName]).toEqual(['retry', 'upstream']);
    expect(error.message).toBe(
      'Retry "upstream" gave up (max-attempts) after 3 attempts on a result it retries',
    );
    expect(giveUps).toStrictEqual([{ attempts: 3, result: replies[2], reason: 'max-attempts' }]);
  });

  it("'reject' gives tryExecute a failure carrying the error", async () => {
    const clock = new ManualClock();
    const outcome = await runOut(
      clock,
      pipeline(retry(on503(clock, { maxAttempts: 2, lastResult: 'reject' }))).tryExecute(() => ({
        status: 503,
      })),
    );
    expect(outcome.value).toMatchObject({ ok: false, rejected: true });
    const failure = outcome.value as { error: RetryExhaustedError<Reply> };
    expect(failure.error.result).toEqual({ status: 503 });
  });

  it("'reject' names max-duration when the time ran out before the attempts", async () => {
    const clock = new ManualClock();
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(
        retry(on503(clock, { maxAttempts: 10, maxDuration: 250, lastResult: 'reject' })),
      ).execute(() => {
        calls++;
        return { status: 503 };
      }),
    );
    expect(calls).toBe(3);
    expect(outcome.error).toMatchObject({ attempts: 3, reason: 'max-duration' });
  });

  it("'reject' still resolves with a result handleResult accepts on a later attempt", async () => {
    const clock = new ManualClock();
    const replies = [{ status: 503 }, { status: 200 }];
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(retry(on503(clock, { lastResult: 'reject' }))).execute(() => replies[calls++]!),
    );
    expect(outcome.ok).toBe(true);
    expect(outcome.value).toBe(replies[1]);
  });

  it("'reject' leaves errors as they are: the call rejects with the last error", async () => {
    const clock = new ManualClock();
    let calls = 0;
    const outcome = await runOut(
      clock,
      pipeline(retry(on503(clock, { lastResult: 'reject' }))).execute((): Reply => {
        calls++;
        throw new Error(`down ${calls}`);
      }),
    );
    expect(calls).toBe(3);
    expect((outcome.error as Error).message).toBe('down 3');
  });

  it('an outer breaker counts a RetryExhaustedError as a failure: the calls reached the dependency', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 2 },
    });
    const p = pipeline(breaker, retry(on503(clock, { maxAttempts: 2, lastResult: 'reject' })));
    for (let i = 0; i < 2; i++) {
      const outcome = await runOut(
        clock,
        p.execute(() => ({ status: 503 })),
      );
      expect(outcome.error).toBeInstanceOf(RetryExhaustedError);
    }
    expect(breaker.state).toBe('open');
  });

  it('an outer breaker counts the last result as a success by default', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 2 },
    });
    const p = pipeline(breaker, retry(on503(clock, { maxAttempts: 2 })));
    for (let i = 0; i < 2; i++)
      await runOut(
        clock,
        p.execute(() => ({ status: 503 })),
      );
    expect(breaker.state).toBe('closed');
  });

  it("'reject' on a result that arrives after the caller aborted rejects with reason 'aborted'", async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const reply = deferred<Reply>();
    const outcome = track(
      pipeline(retry(on503(clock, { lastResult: 'reject' }))).execute(() => reply.promise, {
        signal: controller.signal,
      }),
    );
    controller.abort(new Error('caller gave up'));
    reply.resolve({ status: 503 });
    await outcome.done;
    expect(outcome.error).toMatchObject({
      attempts: 1,
      reason: 'aborted',
      result: { status: 503 },
    });
  });

  it("'reject' under an outer timeout that passed rejects with the TimeoutError", async () => {
    const clock = new ManualClock();
    const reply = deferred<Reply>();
    const outcome = track(
      pipeline(
        new Timeout({ timeout: 50, clock }),
        retry(on503(clock, { lastResult: 'reject' })),
      ).execute(() => reply.promise),
    );
    await clock.advance(50);
    reply.resolve({ status: 503 });
    await outcome.done;
    expect(outcome.error).toBeInstanceOf(TimeoutError);
  });

  it('reconfigure switches lastResult for the calls to come', async () => {
    const clock = new ManualClock();
    const policy = retry(on503(clock, { maxAttempts: 1 }));
    const p = pipeline(policy);
    expect(
      (
        await runOut(
          clock,
          p.execute(() => ({ status: 503 })),
        )
      ).ok,
    ).toBe(true);
    policy.reconfigure(on503(clock, { maxAttempts: 1, lastResult: 'reject' }));
    const outcome = await runOut(
      clock,
      p.execute(() => ({ status: 503 })),
    );
    expect(outcome.error).toMatchObject({ attempts: 1, reason: 'max-attempts' });
  });

  it('rejects a lastResult other than resolve or reject with an OptionsError naming it', () => {
    const make = () => retry({ lastResult: 'throw' as 'reject' });
    expect(make).toThrow(OptionsError);
    expect(make).toThrow(/`lastResult`.*"throw"/);
  });
});
