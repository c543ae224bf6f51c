import { describe, expect, it } from 'vitest';
import { OptionsError, RetryBudget, retryBudget, retryBudgetDefaults } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

/** Runs `steps` against `budget`: each `spend` step records what `trySpend` answered. */
function run(budget: RetryBudget, clock: ManualClock, steps: readonly string[]): string[] {
  const out: string[] = [];
  for (const step of steps) {
    const [op, arg] = step.split(' ');
    const n = arg === undefined ? 1 : Number(arg);
    for (let i = 0; i < (op === 'wait' ? 1 : n); i++) {
      switch (op) {
        case 'start':
          budget.callStarted();
          break;
        case 'end':
          budget.callEnded();
          break;
        case 'ok':
          budget.attemptSucceeded();
          break;
        case 'fail':
          budget.attemptFailed();
          break;
        case 'extraEnded':
          budget.extraEnded();
          break;
        case 'spend':
          out.push(budget.trySpend() ? 'allowed' : 'refused');
          break;
        case 'wait':
          clock.advance(n);
          break;
        default:
          throw new Error(`unknown step ${step}`);
      }
    }
  }
  return out;
}

describe('RetryBudget defaults', () => {
  it('defaults to the window model of Finagle: 10 s, 10 retries per second, 20 %', () => {
    expect(retryBudgetDefaults).toMatchObject({
      model: 'window',
      window: 10_000,
      minRetriesPerSecond: 10,
      ratio: 0.2,
      maxTokens: 10,
      tokenRatio: 0.1,
      minRetryConcurrency: 3,
      name: 'retryBudget',
    });
    const budget = retryBudget({ clock: new ManualClock() });
    expect(budget).toBeInstanceOf(RetryBudget);
    expect(budget.stats()).toEqual({
      model: 'window',
      balance: 10,
      calls: 0,
      active: 0,
      inFlight: 0,
      allowed: 0,
      refused: 0,
    });
  });
});

describe('RetryBudget window model', () => {
  it('grants the share of calls started in the window, then the reserve, as computed by hand', () => {
    const clock = new ManualClock();
    // Buckets of 100 ms; 0.5 retry per call; a reserve of 2 per second, holding 2 at most.
    const budget = retryBudget({ clock, window: '1s', ratio: 0.5, minRetriesPerSecond: 2 });
    const answers = run(budget, clock, [
      'start 4', // share 2
      'spend 2', // share: allowed, allowed
      'spend 3', // reserve 2: allowed, allowed; then refused
      'wait 250', // the reserve refills 2 per second: 0.5
      'spend', // refused
      'wait 250', // 1
      'spend', // allowed (reserve 0)
      'start 2', // t = 500: share 0.5 × 6 = 3, 2 spent: 1 left
      'spend 2', // allowed, refused
      'wait 550', // t = 1050: the bucket of t = 0 (4 calls, 2 retries) leaves: share 1, 1 spent; reserve 1.1
      'spend 3', // reserve: allowed, then refused twice
      'wait 1000', // t = 2050: the window is empty; the reserve is full again (2)
      'spend 3', // allowed, allowed, refused
    ]);
    expect(answers).toEqual([
      'allowed',
      'allowed',
      'allowed',
      'allowed',
      'refused',
      'refused',
      'allowed',
      'allowed',
      'refused',
      'allowed',
      'refused',
      'refused',
      'allowed',
      'allowed',
      'refused',
    ]);
    expect(budget.stats()).toMatchObject({ calls: 6, allowed: 9, refused: 6, inFlight: 9 });
  });

  it('reports the share left and the reserve as its balance', () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, ratio: 0.2, minRetriesPerSecond: 10 });
    run(budget, clock, ['start 50']);
    expect(budget.stats().balance).toBe(20); // 10 of share, 10 of reserve
    run(budget, clock, ['spend 12']);
    expect(budget.stats().balance).toBe(8);
  });
});

describe('RetryBudget window model timer', () => {
  it('keeps one timer, at the end of the bucket, only while calls come, and none once disposed', () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, window: '1s', ratio: 0.5, minRetriesPerSecond: 0 });
    expect(clock.pendingTimers).toBe(0);
    run(budget, clock, ['start 2', 'wait 50']);
    expect(clock.pendingTimers).toBe(1);
    run(budget, clock, ['wait 50']); // t = 100: the tick counts the 2 calls into the first bucket
    expect(clock.pendingTimers).toBe(1); // it ticks once more, after calls came
    run(budget, clock, ['wait 100']); // no call in the second bucket: no timer left
    expect(clock.pendingTimers).toBe(0);
    expect(budget.stats().balance).toBe(1);
    run(budget, clock, ['wait 850']); // t = 1050: the first bucket left the window
    expect(budget.stats().balance).toBe(0);
    run(budget, clock, ['start 4']); // a call after an idle spell starts the timer again
    expect(clock.pendingTimers).toBe(1);
    expect(budget.stats().balance).toBe(2);
    budget.dispose();
    expect(clock.pendingTimers).toBe(0);
    expect(run(budget, clock, ['start 2', 'spend 4'])).toEqual([
      'allowed',
      'allowed',
      'allowed',
      'refused',
    ]);
  });
});

describe('RetryBudget tokens model', () => {
  it('follows gRPC retry throttling: failures cost 1, successes earn tokenRatio, above half only', () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'tokens', maxTokens: 4, tokenRatio: 0.5 });
    expect(budget.stats().balance).toBe(4);
    const answers = run(budget, clock, [
      'fail', // 3
      'spend', // allowed (3 > 2)
      'fail', // 2
      'spend', // refused (2 is not above half)
      'ok', // 2.5
      'spend', // allowed (spending costs nothing: the failure did)
      'fail 4', // 1.5, 0.5, 0, 0
      'ok 4', // 2
      'spend', // refused
      'ok', // 2.5
      'spend', // allowed
      'ok 10', // capped at 4
    ]);
    expect(answers).toEqual(['allowed', 'refused', 'allowed', 'refused', 'allowed']);
    expect(budget.stats()).toMatchObject({ balance: 4, allowed: 3, refused: 2 });
  });

  it('keeps tokens to three decimals, so many small earnings add up exactly', () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'tokens', maxTokens: 10, tokenRatio: 0.1 });
    run(budget, clock, ['fail 10', 'ok 30']);
    expect(budget.stats().balance).toBe(3);
  });
});

describe('RetryBudget concurrency model', () => {
  it('allows extra attempts in progress up to ratio × calls in progress, at least the minimum', () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'concurrency', ratio: 0.5, minRetryConcurrency: 1 });
    const answers = run(budget, clock, [
      'start 2', // limit max(1, 1) = 1
      'spend 2', // allowed, refused
      'start 2', // limit 2
      'spend 2', // allowed, refused
      'extraEnded', // 1 in flight
      'spend', // allowed
      'end 3', // 1 call: limit 1, 2 in flight
      'spend', // refused
      'extraEnded 2',
      'spend', // allowed
    ]);
    expect(answers).toEqual([
      'allowed',
      'refused',
      'allowed',
      'refused',
      'allowed',
      'refused',
      'allowed',
    ]);
    expect(budget.stats()).toMatchObject({ active: 1, inFlight: 1, balance: 0 });
  });

  it('does not round 0.2 × 15 calls up to a fourth retry', () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'concurrency', ratio: 0.2, minRetryConcurrency: 0 });
    expect(run(budget, clock, ['start 15', 'spend 4'])).toEqual([
      'allowed',
      'allowed',
      'allowed',
      'refused',
    ]);
  });
});

describe('RetryBudget events', () => {
  it('emits onExhausted once per run of refusals', () => {
    const clock = new ManualClock();
    const budget = retryBudget({ clock, model: 'tokens', maxTokens: 2, tokenRatio: 1 });
    const events: unknown[] = [];
    budget.onExhausted((e) => events.push(e));
    run(budget, clock, ['fail', 'spend 3', 'ok', 'spend', 'fail', 'spend 2']);
    expect(events).toEqual([
      { model: 'tokens', balance: 1 },
      { model: 'tokens', balance: 1 },
    ]);
  });
});

describe('RetryBudget options', () => {
  const clock = new ManualClock();
  it.each([
    [{ ratio: 0, minRetriesPerSecond: 0 }, 'ratio', /never allows a retry/],
    [{ model: 'concurrency', ratio: 0, minRetryConcurrency: 0 }, 'ratio', /never allows a retry/],
    [{ window: 999 }, 'window', /\[1000, 60000\]/],
    [{ window: '61s' }, 'window', /\[1000, 60000\]/],
    [{ ratio: -0.1 }, 'ratio', /\[0, 1000\]/],
    [{ ratio: 1001 }, 'ratio', /\[0, 1000\]/],
    [{ minRetriesPerSecond: -1 }, 'minRetriesPerSecond', /\[0, 1000000\]/],
    [{ model: 'tokens', maxTokens: 0 }, 'maxTokens', /\[0.001, 1000\]/],
    [{ model: 'tokens', maxTokens: 1001 }, 'maxTokens', /\[0.001, 1000\]/],
    [{ model: 'tokens', tokenRatio: 0 }, 'tokenRatio', /\[0.001, 1000\]/],
    [{ model: 'concurrency', minRetryConcurrency: 1.5 }, 'minRetryConcurrency', /an integer/],
    [{ model: 'leaky' }, 'model', /"window", "tokens", "concurrency"/],
    [{ maxTokens: 5 }, 'maxTokens', /applies to the "tokens" model, not to "window"/],
    [{ model: 'tokens', ratio: 0.1 }, 'ratio', /"window" and "concurrency" models/],
    [{ model: 'concurrency', window: '5s' }, 'window', /"window" model/],
    [{ windw: 5 }, 'windw', /did you mean `window`/],
  ])('refuses %j naming the option and its range', (options, option, expected) => {
    let error: unknown;
    try {
      retryBudget({ clock, ...(options as object) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).option).toBe(option);
    expect((error as OptionsError).message).toMatch(expected);
  });

  it('accepts a window with its unit, and a reserve alone or a share alone', () => {
    expect(() => retryBudget({ clock, window: '10s' })).not.toThrow();
    expect(() => retryBudget({ clock, ratio: 0 })).not.toThrow();
    expect(() => retryBudget({ clock, minRetriesPerSecond: 0 })).not.toThrow();
    expect(() =>
      retryBudget({ clock, model: 'concurrency', minRetryConcurrency: 0 }),
    ).not.toThrow();
  });

  it('reconfigures the share and the reserve, but not the model, the window or the name', () => {
    const budget = retryBudget({ clock, name: 'b', ratio: 0.2 });
    budget.reconfigure({ ratio: 0.5, minRetriesPerSecond: 1 });
    run(budget, clock, ['start 4']);
    expect(budget.stats().balance).toBe(3); // share 2 + reserve 1 (capped at its new size)
    expect(() => budget.reconfigure({ model: 'tokens' })).toThrow(/model cannot change/);
    expect(() => budget.reconfigure({ window: '5s' })).toThrow(/window cannot change/);
    expect(() => budget.reconfigure({ name: 'c' })).toThrow(OptionsError);
  });
});
