import { describe, expect, it } from 'vitest';
import {
  type GiveUpEvent,
  OptionsError,
  pipeline,
  type RetryBudget,
  RetryExhaustedError,
  type RetryOptions,
  retry,
  retryBudget,
  timeout,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';

/** Retry options with exact, jitter-free delays of 100 ms on `clock`. */
function exact(clock: ManualClock, extra: RetryOptions = {}): RetryOptions {
  return { clock, backoff: 'constant', delay: 100, jitter: 'none', ...extra };
}

/** A budget of `perSecond` retries per second (holding as many) and no share of calls. */
function reserveOnly(clock: ManualClock, perSecond: number): RetryBudget {
  return retryBudget({ clock, ratio: 0.001, minRetriesPerSecond: perSecond });
}

function failing() {
  let calls = 0;
  const fn = () => {
    calls++;
    throw new Error(`fail ${calls}`);
  };
  return { fn, calls: () => calls };
}

describe('retry with a budget', () => {
  it('gives up with budget-exhausted when the budget refuses a retry, counted apart from max-attempts', async () => {
    const clock = new ManualClock();
    const budget = reserveOnly(clock, 1); // one retry now, the next a second later
    const policy = retry(exact(clock, { maxAttempts: 4, budget }));
    const giveUps: GiveUpEvent[] = [];
    policy.onGiveUp((e) => giveUps.push(e));
    const exhausted: unknown[] = [];
    budget.onExhausted((e) => exhausted.push(e));
    const dep = failing();
    const outcome = track(pipeline(policy).execute(dep.fn));
    await clock.runAll();
    await outcome.done;
    expect(dep.calls()).toBe(2);
    expect((outcome.error as Error).message).toBe('fail 2');
    expect(giveUps).toEqual([{ attempts: 2, error: outcome.error, reason: 'budget-exhausted' }]);
    expect(policy.stats()).toEqual({ waiting: 0, retries: 1, gaveUp: 1 });
    expect(budget.stats()).toMatchObject({
      calls: 1,
      active: 0,
      inFlight: 0,
      allowed: 1,
      refused: 1,
    });
    expect(exhausted).toHaveLength(1);
  });

  it("rejects with RetryExhaustedError reason 'budget-exhausted' on a retried result with lastResult reject", async () => {
    const clock = new ManualClock();
    const budget = reserveOnly(clock, 1);
    const p = pipeline(
      retry<number>(
        exact(clock, { maxAttempts: 4, budget, handleResult: () => true, lastResult: 'reject' }),
      ),
    );
    const outcome = track(p.execute(() => 503));
    await clock.runAll();
    await outcome.done;
    expect(outcome.error).toBeInstanceOf(RetryExhaustedError);
    expect(outcome.error).toMatchObject({ reason: 'budget-exhausted', attempts: 2, result: 503 });
  });

  it('lets two pipelines on one budget spend from it together', async () => {
    const clock = new ManualClock();
    const budget = reserveOnly(clock, 3);
    const a = pipeline(retry(exact(clock, { maxAttempts: 3, budget })));
    const b = pipeline(retry(exact(clock, { maxAttempts: 3, budget, name: 'b' })));
    const depA = failing();
    const first = track(a.execute(depA.fn));
    // Timers are fired up to the attempts' times only: the budget's own tick at the end of its
    // bucket would move the clock on, and the reserve with it.
    await clock.advanceAsync(200);
    await first.done;
    // A spent 2 of the 3 (at t = 0 and 100); 0.3 came back by t = 200.
    expect(depA.calls()).toBe(3);
    const depB = failing();
    const second = track(b.execute(depB.fn));
    await clock.advanceAsync(100);
    await second.done;
    // B gets one retry (1.6 left at t = 200), not the second (0.9 at t = 300).
    expect(depB.calls()).toBe(2);
    expect(budget.stats()).toMatchObject({ calls: 2, allowed: 3, refused: 1, active: 0 });

    // The same calls on budgets of their own get every retry.
    const own = failing();
    const alone = pipeline(retry(exact(clock, { maxAttempts: 3, budget: reserveOnly(clock, 3) })));
    const third = track(alone.execute(own.fn));
    await clock.runAll();
    await third.done;
    expect(own.calls()).toBe(3);
  });

  it('counts a success, and a success after a retry, without leaving anything in flight', async () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock });
    const p = pipeline(retry(exact(clock, { budget })));
    expect(await p.execute(() => 1)).toBe(1);
    let n = 0;
    const outcome = track(
      p.execute(() => {
        if (++n === 1) throw new Error('once');
        return 2;
      }),
    );
    await clock.runAll();
    await outcome.done;
    expect(outcome.value).toBe(2);
    expect(budget.stats()).toMatchObject({ calls: 2, active: 0, inFlight: 0, allowed: 1 });
  });

  it('gives back the granted retry when the caller aborts during the delay', async () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'concurrency', minRetryConcurrency: 1 });
    const p = pipeline(retry(exact(clock, { maxAttempts: 3, budget })));
    const controller = new AbortController();
    const outcome = track(p.execute(failing().fn, { signal: controller.signal }));
    expect(budget.stats()).toMatchObject({ active: 1, inFlight: 1 });
    controller.abort(new Error('stop'));
    await outcome.done;
    expect(budget.stats()).toMatchObject({ active: 0, inFlight: 0 });
  });

  it('ends the call for the budget when an outer timeout cuts it, and the retry attempt when its work ends', async () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'concurrency', minRetryConcurrency: 1 });
    const p = pipeline(
      timeout({ timeout: 150, strategy: 'aggressive', clock }),
      retry(exact(clock, { maxAttempts: 3, budget })),
    );
    const work = deferred<number>();
    let n = 0;
    const outcome = track(
      p.execute(() => {
        if (++n === 1) throw new Error('first');
        return work.promise; // the retry, at t = 100, hangs past the deadline
      }),
    );
    await clock.advanceAsync(150);
    await outcome.done;
    expect(outcome.ok).toBe(false);
    expect(budget.stats()).toMatchObject({ active: 0, inFlight: 1 });
    work.resolve(1);
    await clock.advanceAsync(0);
    expect(budget.stats()).toMatchObject({ active: 0, inFlight: 0, allowed: 1 });
  });

  it('spends tokens on failures it retries and earns them on successes, never on failures it does not retry', async () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'tokens', maxTokens: 4, tokenRatio: 0.5 });
    const fatal = new Error('400');
    const p = pipeline(retry(exact(clock, { budget, handle: (e) => e !== fatal })));
    await p.tryExecute(() => {
      throw fatal;
    });
    expect(budget.stats().balance).toBe(4);
    let n = 0;
    const outcome = track(
      p.execute(() => {
        if (++n === 1) throw new Error('503');
        return 1;
      }),
    );
    await clock.advanceAsync(100);
    await outcome.done;
    // 4 - 1 for the retried failure, + 0.5 for the success.
    expect(budget.stats()).toMatchObject({ balance: 3.5, allowed: 1, active: 0, inFlight: 0 });
  });

  it('refuses a budget that is not a RetryBudget, and a new budget on reconfigure', () => {
    const clock = new ManualClock();
    expect(() => retry({ budget: {} as RetryBudget })).toThrow(OptionsError);
    expect(() => retry({ budget: {} as RetryBudget })).toThrow(/a RetryBudget/);
    const budget = retryBudget({ clock });
    const policy = retry({ clock, budget });
    policy.reconfigure({ maxAttempts: 5 }); // kept when left out
    expect(policy.budget).toBe(budget);
    expect(() => policy.reconfigure({ budget: retryBudget({ clock }) })).toThrow(
      /budget cannot change/,
    );
  });
});
