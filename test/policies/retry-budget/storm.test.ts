import { describe, expect, it } from 'vitest';
import { pipeline, type RetryBudget, retry, retryBudget } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

interface Storm {
  /** Attempts that reached the dependency, per simulated second. */
  readonly attempts: number[];
  readonly clock: ManualClock;
}

/**
 * Simulates `callsPerSecond` calls a second (spread evenly) for `seconds`, each through
 * `retry({ maxAttempts: 4 })` (exponential delays of 100, 200, 400 ms) to a dependency that
 * fails every attempt made before `failUntil` ms, counting the attempts it receives per second.
 * `at` runs at the start of each second, before its calls.
 */
async function storm(options: {
  seconds: number;
  callsPerSecond: number;
  failUntil: number;
  budget?: (clock: ManualClock) => RetryBudget;
  at?: (second: number, clock: ManualClock) => void;
}): Promise<Storm> {
  const clock = new ManualClock();
  const budget = options.budget?.(clock);
  const p = pipeline(
    retry({ clock, maxAttempts: 4, backoff: 'exponential', delay: 100, jitter: 'none', budget }),
  );
  const attempts: number[] = [];
  const dependency = () => {
    const now = clock.now();
    const second = Math.floor(now / 1000);
    attempts[second] = (attempts[second] ?? 0) + 1;
    if (now < options.failUntil) throw new Error('down');
    return 'ok';
  };
  const gap = 1000 / options.callsPerSecond;
  for (let second = 0; second < options.seconds; second++) {
    options.at?.(second, clock);
    for (let i = 0; i < options.callsPerSecond; i++) {
      p.execute(dependency).catch(() => {});
      await clock.advanceAsync(gap);
    }
  }
  await clock.runAll();
  return { attempts, clock };
}

describe('retry budget in a retry storm (simulated time)', () => {
  it('keeps attempts at 1.2 × the calls plus the reserve a second, where no budget makes 4 ×', async () => {
    const calls = 1000;
    const unbudgeted = await storm({ seconds: 10, callsPerSecond: calls, failUntil: 60_000 });
    // Every call makes its 4 attempts within 700 ms: from the second second on, 4 × the calls.
    expect(unbudgeted.attempts.slice(1, 10)).toEqual(new Array(9).fill(4 * calls));

    const budgeted = await storm({
      seconds: 60,
      callsPerSecond: calls,
      failUntil: 60_000,
      budget: (clock) => retryBudget({ clock }),
    });
    const cap = 1.2 * calls + 10;
    for (const [second, n] of budgeted.attempts.slice(0, 60).entries()) {
      expect.soft(n, `second ${second}`).toBeLessThanOrEqual(cap * 1.01);
      if (second > 0) expect.soft(n, `second ${second}`).toBeGreaterThanOrEqual(cap * 0.99);
    }
    const total = budgeted.attempts.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(60 * cap * 1.01);
  }, 60_000);

  it('gives every call its retries at 1 call a second (the reserve)', async () => {
    let budget: RetryBudget | undefined;
    const { attempts } = await storm({
      seconds: 60,
      callsPerSecond: 1,
      failUntil: Number.POSITIVE_INFINITY,
      budget: (clock) => {
        budget = retryBudget({ clock });
        return budget;
      },
    });
    expect(attempts.slice(0, 60)).toEqual(new Array(60).fill(4));
    expect(budget!.stats()).toMatchObject({ calls: 60, allowed: 180, refused: 0, active: 0 });
  });

  it('has the 20 % allowance back one window after the outage ends', async () => {
    let budget: RetryBudget | undefined;
    const balances: number[] = [];
    await storm({
      seconds: 71,
      callsPerSecond: 1000,
      failUntil: 60_000,
      budget: (clock) => {
        budget = retryBudget({ clock });
        return budget;
      },
      at: (second) => {
        if (second >= 60) balances.push(budget!.stats().balance);
      },
    });
    // At the end of the outage the share is spent; the reserve refilled since the last refusal.
    expect(balances[0]).toBeLessThan(20);
    // 10 s later the window holds 9 full seconds of calls and no retry: 20 % of 9,000, and the
    // reserve of 10.
    expect(balances[10]).toBe(0.2 * 9000 + 10);
  }, 60_000);
});
