import { describe, expect, it, vi } from 'vitest';
import {
  type BackoffKind,
  type JitterKind,
  pipeline,
  Retry,
  type RetryEvent,
  type RetryOptions,
  retry,
  retryDefaults,
  systemClock,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { seededRandom } from '../../support/random.js';

/**
 * Runs a call that always fails through a retry with `options` on a ManualClock and returns the
 * delays reported by onRetry and the clock readings at which each attempt started.
 */
async function delaysOf(options: Omit<RetryOptions, 'clock'>) {
  const clock = new ManualClock();
  const policy = new Retry({ ...options, clock });
  const delays: number[] = [];
  policy.onRetry((e) => delays.push(e.delay));
  const starts: number[] = [];
  const outcome = pipeline(policy).tryExecute(() => {
    starts.push(clock.now());
    throw new Error('boom');
  });
  await clock.runAll();
  const result = await outcome;
  expect(result.ok).toBe(false);
  return { delays, starts };
}

/** Start times implied by a list of delays, for calls that fail at once. */
function startsFrom(delays: number[]): number[] {
  const starts = [0];
  for (const d of delays) starts.push(starts[starts.length - 1]! + d);
  return starts;
}

/** A random source returning the given values in turn (then the last one for ever). */
function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)]!;
}

describe('Retry defaults', () => {
  it('exports the documented defaults', () => {
    expect(retryDefaults).toEqual({
      maxAttempts: 3,
      maxDuration: Number.POSITIVE_INFINITY,
      backoff: 'exponential',
      delay: 100,
      maxDelay: 30_000,
      multiplier: 2,
      jitter: 'full',
      lastResult: 'resolve',
      name: 'retry',
    });
    expect(Object.isFrozen(retryDefaults)).toBe(true);
  });

  it('makes exactly 3 attempts by default', async () => {
    const { starts } = await delaysOf({ random: () => 0.5 });
    expect(starts).toHaveLength(3);
  });

  it('waits 50 then 100 ms by default with random 0.5 (100 ms exponential base, full jitter)', async () => {
    const { delays, starts } = await delaysOf({ random: () => 0.5 });
    expect(delays).toEqual([50, 100]);
    expect(starts).toEqual([0, 50, 150]);
  });

  it('uses Math.random when no random source is given', async () => {
    const spy = vi.spyOn(Math, 'random').mockReturnValue(0.25);
    try {
      const { delays } = await delaysOf({});
      expect(delays).toEqual([25, 50]);
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('uses the system clock and the name "retry" by default', () => {
    const policy = retry();
    expect(policy.clock).toBe(systemClock);
    expect(policy.name).toBe('retry');
    expect(retry({ name: 'payments' }).name).toBe('payments');
  });

  it('caps delays at 30000 ms by default', async () => {
    const { delays } = await delaysOf({ delay: 10_000, jitter: 'none', maxAttempts: 5 });
    expect(delays).toEqual([10_000, 20_000, 30_000, 30_000]);
  });

  it('raises the default maxDelay to the delay when the delay is longer than 30000 ms', async () => {
    const { delays } = await delaysOf({ delay: 40_000, jitter: 'none', maxAttempts: 3 });
    expect(delays).toEqual([40_000, 40_000]);
  });

  it('grows exponential delays by a factor of 2 by default', async () => {
    const { delays } = await delaysOf({ delay: 10, jitter: 'none', maxAttempts: 5 });
    expect(delays).toEqual([10, 20, 40, 80]);
  });
});

describe('Retry backoff kinds (jitter none)', () => {
  const cases: [BackoffKind, Omit<RetryOptions, 'clock'>, number[]][] = [
    ['constant', { delay: 70 }, [70, 70, 70, 70]],
    ['linear', { delay: 70 }, [70, 140, 210, 280]],
    ['exponential', { delay: 70 }, [70, 140, 280, 560]],
    ['exponential', { delay: 10, multiplier: 3 }, [10, 30, 90, 270]],
    ['exponential', { delay: 10, multiplier: 1 }, [10, 10, 10, 10]],
    ['exponential', { delay: 10, multiplier: 1.5 }, [10, 15, 22.5, 33.75]],
    ['linear', { delay: 100, maxDelay: 250 }, [100, 200, 250, 250]],
    ['exponential', { delay: 100, maxDelay: 300 }, [100, 200, 300, 300]],
    ['constant', { delay: 0 }, [0, 0, 0, 0]],
  ];
  it.each(cases)('%s with %o waits %o', async (backoff, options, expected) => {
    const { delays, starts } = await delaysOf({
      ...options,
      backoff,
      jitter: 'none',
      maxAttempts: 5,
    });
    expect(delays).toEqual(expected);
    expect(starts).toEqual(startsFrom(expected));
  });

  it('decorrelated backoff draws from [delay, 3 x previous delay] and ignores jitter', async () => {
    // retry 1: [100, 3 x 100] -> 200 (the delay stands for the previous one);
    // retry 2: 100 + 0.5 * (600 - 100) = 350; retry 3: 100 + 0.5 * (1050 - 100) = 575;
    // retry 4: 100 + 0.5 * (1725 - 100) = 912.5.
    for (const jitter of ['none', 'full', 'equal', 'decorrelated'] as JitterKind[]) {
      const { delays } = await delaysOf({
        backoff: 'decorrelated',
        delay: 100,
        jitter,
        maxAttempts: 5,
        random: () => 0.5,
      });
      expect(delays, `jitter ${jitter}`).toEqual([200, 350, 575, 912.5]);
    }
  });

  // Clients that fail together must not all retry together after exactly `delay`.
  it.each([
    ['backoff', { backoff: 'decorrelated' }],
    ['jitter', { backoff: 'constant', jitter: 'decorrelated' }],
    ['jitter on exponential', { backoff: 'exponential', jitter: 'decorrelated' }],
  ] as const)(
    'decorrelated %s: the first retry is jittered too, within [delay, 3 x delay]',
    async (_, kinds) => {
      const random = seededRandom(14);
      const first: number[] = [];
      for (let client = 0; client < 200; client++) {
        const { delays } = await delaysOf({ ...kinds, delay: 100, maxAttempts: 2, random });
        first.push(delays[0]!);
      }
      for (const d of first) {
        expect(d).toBeGreaterThanOrEqual(100);
        expect(d).toBeLessThanOrEqual(300);
      }
      expect(new Set(first).size).toBe(200);
      expect(Math.min(...first)).toBeLessThan(120);
      expect(Math.max(...first)).toBeGreaterThan(280);
    },
  );

  it('decorrelated backoff is capped at maxDelay', async () => {
    const { delays } = await delaysOf({
      backoff: 'decorrelated',
      delay: 100,
      maxDelay: 400,
      maxAttempts: 5,
      random: () => 0.99,
    });
    // 100 + 0.99 * 200 = 298; then 100 + 0.99 * (894 - 100) > 400 -> 400; then 400.
    expect(delays).toEqual([298, 400, 400, 400]);
  });
});

describe('Retry jitter kinds', () => {
  it('full jitter draws uniformly from [0, d]', async () => {
    const { delays } = await delaysOf({
      backoff: 'constant',
      delay: 200,
      jitter: 'full',
      maxAttempts: 4,
      random: sequence(0, 0.25, 0.75),
    });
    expect(delays).toEqual([0, 50, 150]);
  });

  it('equal jitter draws uniformly from [d/2, d]', async () => {
    const { delays, starts } = await delaysOf({
      backoff: 'exponential',
      delay: 200,
      jitter: 'equal',
      maxAttempts: 4,
      random: sequence(0, 0.5, 0.75),
    });
    // d = 200, 400, 800 -> 100 + 0, 200 + 100, 400 + 300
    expect(delays).toEqual([100, 300, 700]);
    expect(starts).toEqual([0, 100, 400, 1100]);
  });

  it('decorrelated jitter draws from [d, 3 x previous delay], capped at maxDelay', async () => {
    const { delays } = await delaysOf({
      backoff: 'exponential',
      delay: 100,
      jitter: 'decorrelated',
      maxDelay: 1000,
      maxAttempts: 5,
      random: () => 0.5,
    });
    // retry 1: d = 100 in [100, 3 x 100] -> 200 (d stands for the previous delay);
    // retry 2: d = 200 in [200, 600] -> 400; retry 3: d = 400 in [400, 1200] -> 800;
    // retry 4: d = 800 in [800, 2400] -> 1600 -> 1000.
    expect(delays).toEqual([200, 400, 800, 1000]);
  });

  it('no jitter uses the backoff delay as is and never calls random', async () => {
    const random = vi.fn(() => 0.5);
    const { delays } = await delaysOf({ delay: 30, jitter: 'none', maxAttempts: 3, random });
    expect(delays).toEqual([30, 60]);
    expect(random).not.toHaveBeenCalled();
  });

  it.each([
    ['1', 1],
    ['-0.5', -0.5],
    ['NaN', Number.NaN],
    ['2', 2],
  ])('treats a random value of %s as 0', async (_label, value) => {
    const { delays } = await delaysOf({
      backoff: 'constant',
      delay: 100,
      jitter: 'equal',
      maxAttempts: 2,
      random: () => value,
    });
    expect(delays).toEqual([50]);
  });

  it('a random value just below 1 gives a delay just below the top of the range', async () => {
    const { delays } = await delaysOf({
      backoff: 'constant',
      delay: 100,
      jitter: 'full',
      maxAttempts: 2,
      random: () => 0.999,
    });
    expect(delays[0]).toBeCloseTo(99.9, 10);
  });
});

describe('Retry delays on the clock', () => {
  it('starts the next attempt exactly when the delay has elapsed, not before', async () => {
    const clock = new ManualClock();
    const events: RetryEvent[] = [];
    const policy = retry({ clock, backoff: 'linear', delay: 100, jitter: 'none' });
    policy.onRetry((e) => events.push(e));
    const starts: number[] = [];
    const outcome = pipeline(policy).tryExecute(() => {
      starts.push(clock.now());
      throw new Error('boom');
    });
    await clock.advanceAsync(0);
    expect(starts).toEqual([0]);
    expect(events.map((e) => e.delay)).toEqual([100]);
    expect(clock.pendingTimers).toBe(1);

    await clock.advanceAsync(99);
    expect(starts).toEqual([0]);
    await clock.advanceAsync(1);
    expect(starts).toEqual([0, 100]);

    await clock.advanceAsync(199);
    expect(starts).toEqual([0, 100]);
    await clock.advanceAsync(1);
    expect(starts).toEqual([0, 100, 300]);

    const result = await outcome;
    expect(result.ok).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a zero delay still waits for the clock before the next attempt', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const outcome = pipeline(retry({ clock, delay: 0, maxAttempts: 2 })).tryExecute(() => {
      calls++;
      throw new Error('boom');
    });
    await Promise.resolve();
    expect(calls).toBe(1);
    await clock.advanceAsync(0);
    expect(calls).toBe(2);
    expect((await outcome).ok).toBe(false);
  });
});
