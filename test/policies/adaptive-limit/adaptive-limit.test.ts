import { afterEach, describe, expect, it } from 'vitest';
import {
  AdaptiveLimit,
  type AdaptiveLimitOptions,
  type AdaptiveLimitRejectedEvent,
  adaptiveLimit,
  adaptiveLimitDefaults,
  adaptiveLimitKind,
  bulkhead,
  ConcurrencyLimitError,
  diagnosticsChannels,
  ErrorCode,
  isConcurrencyLimitError,
  isPolicyRejection,
  type LimitChangeEvent,
  OptionsError,
  pipeline,
  Registry,
  retry,
  timeout,
  UsageError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { optionsError } from '../../support/errors.js';

function setUp<T = unknown>(options: AdaptiveLimitOptions<T> = {}) {
  const clock = new ManualClock();
  const limit = adaptiveLimit<T>({ clock, ...options });
  const changes: LimitChangeEvent[] = [];
  limit.onLimitChange((e) => changes.push(e));
  return { clock, limit, p: pipeline(limit), changes };
}

/** A function that settles `ms` later on `clock`: with `value`, or rejecting with `error`. */
const settleIn =
  (clock: ManualClock, ms: number, error?: unknown, value: unknown = 'ok') =>
  (): Promise<never> =>
    new Promise((resolve, reject) => {
      clock.setTimer(() => (error === undefined ? resolve(value as never) : reject(error)), ms);
    });

/** Moves `clock` to time `t`, letting every continuation due on the way run. */
const until = (clock: ManualClock, t: number) => clock.advanceAsync(t - clock.now());

const reasonOf = (r: { ok: boolean; error?: unknown }) =>
  r.ok ? 'ok' : (r.error as ConcurrencyLimitError).reason;

const disposers: (() => void)[] = [];
afterEach(() => {
  for (const d of disposers.splice(0)) d();
});

describe('adaptiveLimit options', () => {
  it('has the documented defaults', () => {
    expect(adaptiveLimitDefaults).toEqual({
      algorithm: 'gradient',
      initialLimit: 20,
      minLimit: 1,
      maxLimit: 1000,
      minWindow: 1000,
      maxWindow: 10_000,
      minSamples: 20,
      deadlineRefusal: true,
      maxQueue: 0,
      queueTimeout: Number.POSITIVE_INFINITY,
      queue: 'fifo',
      codelTarget: 5,
      codelInterval: 100,
      name: 'adaptiveLimit',
      gradient: { tolerance: 1.25, growth: 0.1 },
      vegas: { alpha: 3, beta: 6 },
      aimd: { backoffRatio: 0.9, increase: 1, maxLatency: Number.POSITIVE_INFINITY },
    });
  });

  it('starts at its initial limit with nothing learned', () => {
    const { limit } = setUp();
    expect(limit.stats()).toEqual({
      limit: 20,
      inFlight: 0,
      queueLength: 0,
      recentLatency: Number.NaN,
      baselineLatency: Number.NaN,
      medianLatency: Number.NaN,
      algorithm: 'gradient',
      decision: 'none',
      windows: 0,
      admitted: 0,
      samples: { answered: 0, dropped: 0, ignored: 0 },
      rejectionsByReason: { limit: 0, queueTimeout: 0, codel: 0, deadline: 0 },
      queue: 'fifo',
      dropping: false,
    });
    expect(limit.name).toBe('adaptiveLimit');
  });

  it.each<[AdaptiveLimitOptions, string, string]>([
    [{ initialLimit: 0 }, 'initialLimit', 'an integer in [1, 1000]'],
    [{ initialLimit: 2.5 }, 'initialLimit', 'an integer in [1, 1000]'],
    [{ maxLimit: 10, initialLimit: 11 }, 'initialLimit', 'an integer in [1, 10]'],
    [{ minLimit: 50, maxLimit: 10 }, 'minLimit', 'an integer in [1, 10]'],
    [{ maxLimit: 0 }, 'maxLimit', 'an integer in [1, 2147483647]'],
    [{ maxWindow: 0 }, 'maxWindow', 'a number of ms in [1, 3600000]'],
    [{ minWindow: 20_000 }, 'minWindow', 'a number of ms in [1, 10000]'],
    [{ minSamples: 0 }, 'minSamples', 'an integer in [1, 2147483647]'],
    [{ algorithm: 'reno' as 'aimd' }, 'algorithm', 'one of "gradient", "vegas", "aimd"'],
    [{ algorithm: 5 as never }, 'algorithm', 'or a function of the window'],
    [
      { algorithm: { kind: 'gradient', tolerance: 1 } },
      'algorithm.tolerance',
      'a number in (1, 10]',
    ],
    [{ algorithm: { kind: 'gradient', growth: 0 } }, 'algorithm.growth', 'a number in (0, 1]'],
    [{ algorithm: { kind: 'vegas', beta: 3 } }, 'algorithm.beta', 'a number in (3, 100]'],
    [{ algorithm: { kind: 'aimd', backoffRatio: 1 } }, 'algorithm.backoffRatio', 'must cut'],
    [{ algorithm: { kind: 'aimd', increase: 0 } }, 'algorithm.increase', 'an integer in [1, 1000]'],
    [{ algorithm: { kind: 'aimd', tolerance: 2 } as never }, 'algorithm.tolerance', 'not set'],
    [{ partitions: { critical: 0 } }, 'partitions.critical', 'a number in (0, 1]'],
    [{ partitions: {} }, 'partitions', 'at least one criticality'],
    [{ partitions: { live: 0.5 } as never }, 'partitions.live', 'not set'],
    [{ handle: 1 as never }, 'handle', 'a function'],
    [{ deadlineRefusal: 'yes' as never }, 'deadlineRefusal', 'a boolean'],
    [{ queue: 'lifo' }, 'queue', 'give maxQueue >= 1'],
    [{ maxQueue: 1, codelTarget: 5 }, 'codelTarget', 'only with queue: "codel"'],
    [{ maxInFlight: 5 } as never, 'maxInFlight', 'not a known option'],
  ])('refuses %j naming %s and the valid range', (options, option, expected) => {
    const e = optionsError(() => adaptiveLimit(options));
    expect(e.option).toBe(option);
    expect(e.expected).toContain(expected);
  });

  it('takes each algorithm by name or with its settings, and durations as strings', () => {
    for (const kind of ['gradient', 'vegas', 'aimd'] as const) {
      expect(adaptiveLimit({ algorithm: kind }).stats().algorithm).toBe(kind);
      expect(adaptiveLimit({ algorithm: { kind } }).stats().algorithm).toBe(kind);
    }
    expect(adaptiveLimit({ algorithm: (w) => w.limit }).stats().algorithm).toBe('custom');
    const a = adaptiveLimit({ minWindow: '250ms', maxWindow: '2s', minLimit: 30 });
    expect(a.limit).toBe(30);
  });
});

describe('adaptiveLimit admission', () => {
  it('admits up to the limit and refuses beyond with ConcurrencyLimitError (reason limit), without calling', async () => {
    const { clock, limit, p } = setUp({ initialLimit: 2, name: 'db' });
    const events: AdaptiveLimitRejectedEvent[] = [];
    limit.onRejected((e) => events.push(e));
    let called = 0;
    const fn = () => {
      called++;
      return settleIn(clock, 10)();
    };
    const calls = [p.tryExecute(fn), p.tryExecute(fn), p.tryExecute(fn)];
    expect(limit.inFlight).toBe(2);
    await clock.advanceAsync(10);
    const results = await Promise.all(calls);
    expect(results.map(reasonOf)).toEqual(['ok', 'ok', 'limit']);
    expect(called).toBe(2);
    const error = (results[2] as { error: unknown }).error as ConcurrencyLimitError;
    expect(error).toBeInstanceOf(ConcurrencyLimitError);
    expect(isConcurrencyLimitError(error) && isPolicyRejection(error)).toBe(true);
    expect(error.code).toBe(ErrorCode.ConcurrencyLimit);
    // The preallocated error carries nothing of one call: the event has the limit.
    expect(error).toMatchObject({ policy: 'adaptiveLimit', policyName: 'db', limit: Number.NaN });
    expect(error.message).toBe('Adaptive limit "db" is full');
    expect(events).toEqual([
      {
        reason: 'limit',
        limit: 2,
        inFlight: 2,
        queued: 0,
        timeLeft: Number.NaN,
        latency: Number.NaN,
      },
    ]);
    expect(limit.inFlight).toBe(0);
    expect(limit.stats()).toMatchObject({ admitted: 2, rejectionsByReason: { limit: 1 } });
  });

  it('gives the permit back on success, sync throw, rejection, inner timeout, call deadline and caller abort', async () => {
    const listening = ({ signal }: { signal: AbortSignal }) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason));
      });
    const { clock, limit } = setUp({ initialLimit: 5 });
    const p = pipeline(limit, timeout({ timeout: 50, clock }));
    const aborter = new AbortController();
    const calls = [
      p.tryExecute(settleIn(clock, 10)),
      p.tryExecute(() => {
        throw new Error('sync');
      }),
      p.tryExecute(settleIn(clock, 10, new Error('async'))),
      p.tryExecute(settleIn(clock, 100)),
      // It hears its deadline and stops: a timeout (one that does not holds the permit until
      // its work ends, and counts as what the work gave).
      pipeline(limit).tryExecute(listening, { timeout: 30 }),
      pipeline(limit).tryExecute(listening, { signal: aborter.signal }),
    ];
    aborter.abort(new Error('caller'));
    await clock.advanceAsync(200);
    await Promise.all(calls);
    expect(limit.inFlight).toBe(0);
    // The timeouts are drops; the caller's abort says nothing; errors are answers.
    expect(limit.stats().samples).toEqual({ answered: 3, dropped: 2, ignored: 1 });
  });

  it('counts as drops the errors `handle` picks and the results `handleResult` picks; refusals inside are ignored', async () => {
    const { clock, limit } = setUp<{ status: number }>({
      handle: (e) => (e as Error).message === '503',
      handleResult: (r) => r.status === 429,
    });
    const inner = bulkhead({ maxConcurrent: 1 });
    const p = pipeline(limit);
    const q = pipeline(limit, inner);
    const calls = [
      p.tryExecute(settleIn(clock, 5, new Error('503'))),
      p.tryExecute(settleIn(clock, 5, new Error('500'))),
      p.tryExecute(settleIn(clock, 5, undefined, { status: 429 })),
      p.tryExecute(settleIn(clock, 5, undefined, { status: 200 })),
      q.tryExecute(settleIn(clock, 5)),
      q.tryExecute(settleIn(clock, 5)),
    ];
    await clock.advanceAsync(5);
    await Promise.all(calls);
    expect(limit.stats().samples).toEqual({ answered: 3, dropped: 2, ignored: 1 });
  });
});

describe('adaptiveLimit windows', () => {
  /**
   * One window per second: `k` calls of `ms` at 500 ms into it (`extra` more, which the limit
   * refuses), and one of `ms` ending at its end, whose end closes it. Every call of a window
   * lies within it, so its latency is exactly `ms`.
   */
  async function windowOf(
    clock: ManualClock,
    p: ReturnType<typeof pipeline>,
    second: number,
    k: number,
    ms: number,
    extra = 0,
    failing = 0,
  ) {
    await until(clock, second * 1000 + 500);
    const calls = [];
    for (let i = 0; i < k + extra; i++) {
      calls.push(p.tryExecute(settleIn(clock, ms, i < failing ? new Error('shed') : undefined)));
    }
    await until(clock, (second + 1) * 1000 - ms);
    calls.push(p.tryExecute(settleIn(clock, ms)));
    await until(clock, (second + 1) * 1000);
    return Promise.all(calls);
  }

  it('measures each window’s mean latency by Little’s law, exactly when its calls lie within it, and learns from it', async () => {
    const { clock, limit, p, changes } = setUp({
      initialLimit: 10,
      minSamples: 1,
      handle: (e) => (e as Error).message === 'shed',
    });
    // 4 calls of 20 ms, under half the limit: the baseline (20) holds none of our queue, and
    // the limit stays, too little in use to judge.
    await windowOf(clock, p, 0, 3, 20);
    expect(limit.stats()).toMatchObject({
      limit: 10,
      recentLatency: 20,
      baselineLatency: 20,
      decision: 'app-limited',
      windows: 1,
    });
    // 10 calls of 20 ms and 2 refused: no queue (20 / 20), limit reached: 10 + 1.
    await windowOf(clock, p, 1, 10, 20, 2);
    expect(limit.stats()).toMatchObject({
      limit: 11,
      recentLatency: 20,
      baselineLatency: 20,
      decision: 'increase',
      windows: 2,
    });
    // 30 ms with the limit full: 30 / 20 = 1.5 > 1.25, cut to 11 × 1.125 / 1.5 = 8.25.
    await windowOf(clock, p, 2, 11, 30, 2);
    // The cut lowered the calls in flight (12 × 30 / 1000 = 0.36 to 9 × 29.75 / 1000 = 0.268)
    // but not the latency (29.75 >= 0.98 × 30): the dependency got slower; the baseline takes
    // 29.75, and the limit grows again.
    await windowOf(clock, p, 3, 8, 29.75, 2);
    expect(limit.stats()).toMatchObject({ limit: 9, baselineLatency: 29.75, recentLatency: 29.75 });
    // One drop in 10 calls: 9 × 0.9 = 8.1.
    await windowOf(clock, p, 4, 9, 20, 0, 1);
    expect(changes).toEqual([
      {
        name: 'adaptiveLimit',
        from: 10,
        to: 11,
        reason: 'increase',
        latency: 20,
        baseline: 20,
        answered: 11,
        dropped: 0,
        maxInFlight: 10,
      },
      {
        name: 'adaptiveLimit',
        from: 11,
        to: 8,
        reason: 'latency',
        latency: 30,
        baseline: 20,
        answered: 12,
        dropped: 0,
        maxInFlight: 11,
      },
      {
        name: 'adaptiveLimit',
        from: 8,
        to: 9,
        reason: 'increase',
        latency: 29.75,
        baseline: 29.75,
        answered: 9,
        dropped: 0,
        maxInFlight: 8,
      },
      {
        name: 'adaptiveLimit',
        from: 9,
        to: 8,
        reason: 'drop',
        latency: 20,
        baseline: 29.75,
        answered: 9,
        dropped: 1,
        maxInFlight: 9,
      },
    ]);
    // A window with drops is no measure of the latency.
    expect(limit.stats()).toMatchObject({
      recentLatency: 29.75,
      decision: 'drop',
      windows: 5,
      samples: { answered: 45, dropped: 1, ignored: 0 },
      rejectionsByReason: { limit: 6 },
    });
  });

  it('on a clock that is costly to read, reads it through a coarse cache, with the same figures here', async () => {
    class CostlyClock extends ManualClock {
      reads = 0;
      override readonly cheapNow = false;
      override now(): number {
        this.reads++;
        return super.now();
      }
    }
    const clock = new CostlyClock();
    const limit = adaptiveLimit({ clock, initialLimit: 10, minSamples: 1 });
    const p = pipeline(limit);
    await windowOf(clock, p, 0, 10, 20, 2);
    // The first window had the limit full: a probe halves it (see the learning tests).
    expect(limit.stats()).toMatchObject({ limit: 5, recentLatency: 20, windows: 1 });
    // 13 calls started and ended at 4 instants (and its own reading when built).
    expect(clock.reads).toBeLessThanOrEqual(8);
    await clock.advanceAsync(10);
    expect(clock.pendingTimers).toBe(0);
  });

  it('ends a window only when a call ends past its end, never on a timer', async () => {
    const { clock, limit, p } = setUp({ minSamples: 1 });
    const call = p.execute(settleIn(clock, 10));
    await clock.advanceAsync(10);
    await call;
    expect(clock.pendingTimers).toBe(0);
    await clock.advanceAsync(60_000);
    expect(limit.stats().windows).toBe(0);
    await p.execute(() => 'now');
    expect(limit.stats().windows).toBe(1);
  });

  it('waits for minSamples calls, up to maxWindow, then judges only the drops', async () => {
    const { clock, limit, p } = setUp({ minSamples: 5, maxWindow: 3000 });
    for (let i = 0; i < 4; i++) {
      await clock.advanceAsync(1000);
      await p.execute(() => 'x');
    }
    // 4 calls by 4 s: the window ended at the call after 3 s, unjudged.
    expect(limit.stats()).toMatchObject({ windows: 1, decision: 'few-samples', limit: 20 });
    expect(limit.stats().recentLatency).toBeNaN();
  });

  it('keeps the limit within minLimit and maxLimit', async () => {
    const { clock, limit, p } = setUp({
      initialLimit: 2,
      minLimit: 2,
      maxLimit: 3,
      minSamples: 1,
      algorithm: (w) => (w.limit === 2 ? 100 : -5),
    });
    await windowOf(clock, p, 0, 1, 10);
    expect(limit.limit).toBe(3);
    await windowOf(clock, p, 1, 1, 10);
    expect(limit.limit).toBe(2);
  });
});

describe('adaptiveLimit deadline-aware refusal', () => {
  /** Durations with a median of 100 ms and a mean of 234.5 ms (the tail pulls the mean up). */
  const DURATIONS = [50, 60, 70, 90, 100, 100, 110, 300, 400, 500, 900];

  /** A limit whose calls with a deadline, every one timed on the manual clock, took DURATIONS. */
  async function learned(options: AdaptiveLimitOptions = {}) {
    const s = setUp({ minSamples: 1, ...options });
    const calls = DURATIONS.map((ms) => s.p.execute(settleIn(s.clock, ms), { timeout: 1_000 }));
    await s.clock.advanceAsync(900);
    await Promise.all(calls);
    return s;
  }

  it('hands out refusals that a later refusal never changes', async () => {
    const { limit, p } = await learned({ name: 'api' });
    const first = (await p.tryExecute(() => 1, { timeout: 90 })) as {
      error: ConcurrencyLimitError;
    };
    const seen = {
      timeLeft: first.error.timeLeft,
      latency: first.error.latency,
      limit: first.error.limit,
    };
    const events: AdaptiveLimitRejectedEvent[] = [];
    limit.onRejected((e) => events.push(e));
    await p.tryExecute(() => 1, { timeout: 40 });
    expect(first.error).toMatchObject(seen);
    // What is particular to one refusal comes with its event.
    expect(events).toMatchObject([
      { reason: 'deadline', timeLeft: 40, latency: limit.stats().medianLatency },
    ]);
  });

  it('refuses before it starts a call whose own deadline leaves less than the median latency, not the mean', async () => {
    // Debug errors carry the call's time left and the median it fell short of.
    const { limit, p } = await learned({ name: 'api', debug: true });
    // The median is read from a histogram, within 3 % of the exact one.
    expect(Math.abs(limit.stats().medianLatency - 100)).toBeLessThanOrEqual(3);
    let called = 0;
    const r = await p.tryExecute(() => called++, { timeout: 90 });
    expect(r.ok).toBe(false);
    expect(called).toBe(0);
    const error = (r as { error: ConcurrencyLimitError }).error;
    expect(error).toBeInstanceOf(ConcurrencyLimitError);
    expect(error).toMatchObject({
      reason: 'deadline',
      code: ErrorCode.DeadlineTooShort,
      timeLeft: 90,
    });
    expect(error.latency).toBe(limit.stats().medianLatency);
    // 150 ms is below the mean but above the median: most calls would make it.
    expect(await p.tryExecute(() => called++, { timeout: 150 })).toMatchObject({ ok: true });
    expect(await p.tryExecute(() => called++)).toMatchObject({ ok: true });
    expect(called).toBe(2);
    expect(limit.stats().rejectionsByReason.deadline).toBe(1);
  });

  it('counts an outer timeout policy’s deadline, and a retry’s later attempts get theirs afresh', async () => {
    const { clock, limit } = await learned();
    const outer = pipeline(timeout({ timeout: 80, clock }), limit);
    expect((await outer.tryExecute(() => 'x')).ok).toBe(false);
    // Each attempt inside the retry has 110 ms of its own: all three are admitted.
    let attempts = 0;
    const retried = pipeline(
      retry({ maxAttempts: 3, delay: 10, backoff: 'constant', jitter: 'none', clock }),
      timeout({ timeout: 110, clock }),
      limit,
    );
    const call = retried.tryExecute(() => {
      attempts++;
      throw new Error('again');
    });
    await clock.advanceAsync(100);
    await call;
    expect(attempts).toBe(3);
    // The call's own deadline, 120 ms, bounds the attempts: the second starts at 15 ms with 105
    // left, the third at 30 ms with 90, below the median of about 100 ms.
    attempts = 0;
    const bounded = retried.tryExecute(
      () => {
        attempts++;
        return settleIn(clock, 5, new Error('again'))();
      },
      { timeout: 120 },
    );
    await clock.advanceAsync(200);
    expect(await bounded).toMatchObject({ ok: false });
    expect(attempts).toBe(2);
  });

  /** Runs `n` calls of `ms` at once through `p` (with `options`), and waits for them. */
  async function calls(
    clock: ManualClock,
    p: ReturnType<typeof pipeline>,
    n: number,
    ms: number,
    options?: { timeout: number },
  ) {
    const all = Array.from({ length: n }, () => p.tryExecute(settleIn(clock, ms), options));
    await clock.advanceAsync(ms);
    return Promise.all(all);
  }

  it('times only calls with a deadline, and refuses nothing for its deadline before 10 were timed, or with deadlineRefusal false', async () => {
    const { clock, limit, p } = setUp();
    await calls(clock, p, 20, 100);
    expect(limit.stats().medianLatency).toBeNaN();
    const timed = await calls(clock, p, 9, 100, { timeout: 150 });
    expect(timed.every((r) => r.ok)).toBe(true);
    expect(limit.stats().medianLatency).toBeNaN();
    expect((await p.tryExecute(() => 'x', { timeout: 1 })).ok).toBe(true);
    // The tenth call with a deadline (the one above took no time).
    expect(Math.abs(limit.stats().medianLatency - 100)).toBeLessThanOrEqual(3);
    expect((await p.tryExecute(() => 'x', { timeout: 1 })).ok).toBe(false);
    const { limit: off, p: offPipeline } = await learned({ deadlineRefusal: false });
    expect(off.stats().medianLatency).toBeNaN();
    expect((await offPipeline.tryExecute(() => 'x', { timeout: 1 })).ok).toBe(true);
  });

  it('on a clock that is costly to read, times one call with a deadline in four', async () => {
    class CostlyClock extends ManualClock {
      override readonly cheapNow = false;
    }
    const clock = new CostlyClock();
    const limit = adaptiveLimit({ clock });
    const p = pipeline(limit);
    await calls(clock, p, 19, 20, { timeout: 1_000 });
    await calls(clock, p, 20, 20, { timeout: 1_000 });
    expect(limit.stats().medianLatency).toBeNaN();
    await calls(clock, p, 1, 20, { timeout: 1_000 });
    expect(Math.abs(limit.stats().medianLatency - 20)).toBeLessThanOrEqual(1);
    await clock.advanceAsync(10);
    expect(clock.pendingTimers).toBe(0);
  });

  it('forgets the timed calls after 10 s: the median covers the last 5 to 10 s', async () => {
    const { clock, limit } = await learned();
    await clock.advanceAsync(5_000);
    expect(limit.stats().medianLatency).toBeGreaterThan(0);
    await clock.advanceAsync(5_000);
    expect(limit.stats().medianLatency).toBeNaN();
  });
});

describe('adaptiveLimit partitions', () => {
  it('lets any criticality borrow the idle limit, then admits a criticality within its share above the limit', async () => {
    const { clock, limit } = setUp({
      initialLimit: 10,
      partitions: { critical: 0.9, sheddable: 0.1 },
    });
    const p = pipeline(limit);
    const run = (criticality: 'critical' | 'sheddable' | 'critical-plus' | 'sheddable-plus') =>
      p.tryExecute(settleIn(clock, 10), { criticality });
    // Batch alone takes the whole limit.
    const batch = Array.from({ length: 10 }, () => run('sheddable'));
    expect(limit.inFlight).toBe(10);
    expect(reasonOf(await run('sheddable-plus'))).toBe('limit');
    // Live (critical, and critical-plus counted with it) is under its share of 9: admitted.
    const live = Array.from({ length: 9 }, (_, i) => run(i % 2 ? 'critical-plus' : 'critical'));
    expect(limit.inFlight).toBe(19);
    expect(limit.stats().partitions).toEqual({
      sheddable: { share: 0.1, limit: 1, inFlight: 10 },
      critical: { share: 0.9, limit: 9, inFlight: 9 },
    });
    expect(reasonOf(await run('critical'))).toBe('limit');
    await clock.advanceAsync(10);
    await Promise.all([...batch, ...live]);
    expect(limit.stats().partitions!.critical!.inFlight).toBe(0);
    expect(limit.stats().partitions!.sheddable!.inFlight).toBe(0);
  });

  it('a criticality not listed counts with the nearest listed one below it, or the lowest', () => {
    const { limit } = setUp({
      initialLimit: 10,
      partitions: { 'sheddable-plus': 0.3, critical: 0.7 },
    });
    void limit.executeSync(() => 1, { criticality: 'sheddable' });
    expect(limit.stats().partitions).toEqual({
      'sheddable-plus': { share: 0.3, limit: 3, inFlight: 0 },
      critical: { share: 0.7, limit: 7, inFlight: 0 },
    });
  });
});

describe('adaptiveLimit partition shares', () => {
  it('refuses shares that sum above 1, which would let more calls in flight than the limit', () => {
    // Four shares of 1 would put 40 calls in flight on a limit of 10.
    const all = { 'critical-plus': 1, critical: 1, 'sheddable-plus': 1, sheddable: 1 };
    const error = optionsError(() => adaptiveLimit({ partitions: all }));
    expect(error.option).toBe('partitions');
    expect(error.message).toMatch(/sum to at most 1/);
    expect(() => adaptiveLimit({ partitions: { critical: 0.7, sheddable: 0.4 } })).toThrow(
      OptionsError,
    );
    expect(adaptiveLimit({ partitions: { critical: 0.7, sheddable: 0.3 } })).toBeInstanceOf(
      AdaptiveLimit,
    );
  });
});

describe('adaptiveLimit queue', () => {
  it('queues calls beyond the limit, admits them as permits free, and keeps their criticality', async () => {
    const { clock, limit } = setUp({
      initialLimit: 1,
      maxQueue: 2,
      partitions: { critical: 0.5, sheddable: 0.5 },
    });
    const p = pipeline(limit);
    const first = p.tryExecute(settleIn(clock, 10), { criticality: 'sheddable' });
    const second = p.tryExecute(settleIn(clock, 10), { criticality: 'sheddable' });
    const third = p.tryExecute(settleIn(clock, 10), { criticality: 'sheddable' });
    expect(limit.queueLength).toBe(2);
    expect(reasonOf(await p.tryExecute(settleIn(clock, 10), { criticality: 'sheddable' }))).toBe(
      'limit',
    );
    await clock.advanceAsync(10);
    expect(limit.stats().partitions!.sheddable!.inFlight).toBe(1);
    await clock.advanceAsync(20);
    expect((await Promise.all([first, second, third])).map(reasonOf)).toEqual(['ok', 'ok', 'ok']);
    expect(limit.stats()).toMatchObject({ inFlight: 0, queueLength: 0, admitted: 3 });
    expect(limit.stats().partitions!.sheddable!.inFlight).toBe(0);
  });

  it('gives up the place of a call aborted or timed out in the queue; dispose refuses the waiting ones', async () => {
    const { clock, limit } = setUp({ initialLimit: 1, maxQueue: 5, queueTimeout: 50 });
    const p = pipeline(limit);
    const running = p.tryExecute(settleIn(clock, 100));
    const aborter = new AbortController();
    const aborted = p.tryExecute(settleIn(clock, 10), { signal: aborter.signal });
    const timedOut = p.tryExecute(settleIn(clock, 10));
    aborter.abort(new Error('gone'));
    expect((await aborted).ok).toBe(false);
    expect(limit.queueLength).toBe(1);
    await clock.advanceAsync(50);
    expect(reasonOf(await timedOut)).toBe('queue-timeout');
    const waiting = p.tryExecute(settleIn(clock, 10));
    limit.dispose();
    const r = await waiting;
    expect((r as { error: unknown }).error).toBeInstanceOf(UsageError);
    await clock.advanceAsync(100);
    expect((await running).ok).toBe(true);
    expect(limit.stats()).toMatchObject({
      inFlight: 0,
      queueLength: 0,
      rejectionsByReason: { queueTimeout: 1 },
    });
  });

  it('serves a CoDel queue newest first once it stands, refusing calls past the target', async () => {
    const { clock, limit } = setUp({
      initialLimit: 1,
      maxQueue: 10,
      queue: 'codel',
      codelTarget: 5,
      codelInterval: 20,
    });
    const p = pipeline(limit);
    const order: number[] = [];
    const call = (i: number) =>
      p.tryExecute(() => {
        order.push(i);
        return settleIn(clock, 30)();
      });
    const calls = [call(0), call(1)];
    await clock.advanceAsync(25);
    calls.push(call(2));
    await clock.advanceAsync(5);
    await clock.advanceAsync(100);
    const results = await Promise.all(calls);
    // When the first ended at 30 the queue had stood 30 ms: call 1 (waited 30 > 5) was refused,
    // call 2 (waited 5) admitted.
    expect(results.map(reasonOf)).toEqual(['ok', 'codel', 'ok']);
    expect(order).toEqual([0, 2]);
    expect(limit.stats().rejectionsByReason.codel).toBe(1);
  });
});

describe('adaptiveLimit reconfigure', () => {
  it('keeps what it learned, moves the limit into a new range (reason reconfigure), and refuses what pipelines built with it read', () => {
    const { limit, changes } = setUp({ initialLimit: 30 });
    limit.reconfigure({ maxLimit: 25, algorithm: 'vegas' });
    expect(limit.stats()).toMatchObject({ limit: 25, algorithm: 'vegas' });
    expect(changes).toMatchObject([{ from: 30, to: 25, reason: 'reconfigure' }]);
    expect(() => limit.reconfigure({ maxQueue: 5 })).toThrow(OptionsError);
    expect(() => limit.reconfigure({ partitions: { critical: 1 } })).toThrow(OptionsError);
    expect(() => limit.reconfigure({ deadlineRefusal: false })).toThrow(OptionsError);
    expect(() => limit.reconfigure({ name: 'other' })).toThrow(OptionsError);
    expect(limit.stats().limit).toBe(25);
  });
});

describe('adaptiveLimit in a registry, metrics and diagnostics', () => {
  it('takes an algorithm by name in config data, as code does', () => {
    for (const name of ['gradient', 'vegas', 'aimd'] as const) {
      const registry = new Registry({ adaptiveLimits: { a: { algorithm: name } } });
      disposers.push(() => registry.dispose());
      expect(registry.adaptiveLimit('a').stats().algorithm).toBe(name);
    }
  });

  it('is built from config data (adaptiveLimits and defaults), listed with its stats, and on the dashboard', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        defaults: { adaptiveLimit: { maxLimit: 500 } },
        adaptiveLimits: {
          search: {
            initialLimit: 40,
            algorithm: { kind: 'aimd', maxLatency: '2s' },
            minWindow: '500ms',
            partitions: { critical: 0.8, sheddable: 0.2 },
          },
        },
      },
      { clock },
    );
    disposers.push(() => registry.dispose());
    const search = registry.adaptiveLimit('search');
    expect(search).toBeInstanceOf(AdaptiveLimit);
    expect(registry.adaptiveLimit('search')).toBe(search);
    expect(search.stats()).toMatchObject({ limit: 40, algorithm: 'aimd' });
    const entry = registry.snapshot().instances.find((i) => i.kind === 'adaptiveLimit');
    expect(entry).toMatchObject({ name: 'search', kind: 'adaptiveLimit', stats: { limit: 40 } });
    expect(adaptiveLimitKind.dashboard!({ stats: search.stats() })).toEqual({
      calls: 0,
      rejected: 0,
      levels: { 'in flight': 0, limit: 40, queued: 0 },
      levelsLabel: 'calls in flight',
      detail: 'limit 40, 0 in flight; latency –, baseline – (aimd: none)',
    });
  });

  it('publishes its limit changes and refusals on the diagnostics channels', async () => {
    const dc = await import('node:diagnostics_channel');
    const seen: unknown[] = [];
    const onChange = (m: unknown) => seen.push(['change', m]);
    const onRejected = (m: unknown) => seen.push(['rejected', (m as { reason: string }).reason]);
    dc.subscribe(diagnosticsChannels.limitChange, onChange);
    dc.subscribe(diagnosticsChannels.rejected, onRejected);
    disposers.push(() => {
      dc.unsubscribe(diagnosticsChannels.limitChange, onChange);
      dc.unsubscribe(diagnosticsChannels.rejected, onRejected);
    });
    const { limit } = setUp({ initialLimit: 1 });
    limit.reconfigure({ minLimit: 2 });
    const p = pipeline(limit);
    const held = [
      p.tryExecute(() => new Promise(() => {})),
      p.tryExecute(() => new Promise(() => {})),
    ];
    await p.tryExecute(() => 'x');
    void held;
    expect(seen).toEqual([
      [
        'change',
        expect.objectContaining({ name: 'adaptiveLimit', from: 1, to: 2, reason: 'reconfigure' }),
      ],
      ['rejected', 'limit'],
    ]);
  });
});
