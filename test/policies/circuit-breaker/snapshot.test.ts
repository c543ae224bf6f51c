import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitBreakerSnapshot,
  OptionsError,
  pipeline,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { run } from '../../support/breaker.js';
import { buildLibrary, root } from '../../support/build.js';
import { runNodeScript } from '../../support/child.js';
import { optionsError } from '../../support/errors.js';

/** The snapshot taken from `from`, passed through JSON as a store would. */
function roundTrip(from: CircuitBreaker): CircuitBreakerSnapshot {
  return JSON.parse(JSON.stringify(from)) as CircuitBreakerSnapshot;
}

/** A breaker restored from `snapshot` on a fresh clock starting at `start`. */
function restored(
  snapshot: CircuitBreakerSnapshot,
  options: CircuitBreakerOptions,
  start = 1_000_000,
) {
  const clock = new ManualClock(start);
  const breaker = new CircuitBreaker({ ...options, clock, initialState: snapshot });
  return { clock, breaker, p: pipeline(breaker) };
}

describe('toJSON()', () => {
  it('describes a fresh breaker', () => {
    const breaker = new CircuitBreaker({ clock: new ManualClock() });
    expect(breaker.toJSON()).toEqual({
      version: 1,
      state: 'closed',
      openRemaining: 0,
      consecutiveOpens: 0,
      window: { kind: 'count', data: [] },
    });
  });

  it('is what JSON.stringify writes', () => {
    const breaker = new CircuitBreaker({ clock: new ManualClock() });
    breaker.trip();
    expect(JSON.parse(JSON.stringify(breaker))).toEqual(breaker.toJSON());
  });

  it('reports the time left in the open period, read now', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, breakDuration: 1000 });
    breaker.trip();
    clock.advance(300);
    expect(breaker.toJSON()).toMatchObject({
      state: 'open',
      openRemaining: 700,
      consecutiveOpens: 1,
    });
    clock.advance(700);
    expect(breaker.toJSON()).toMatchObject({ state: 'half-open', openRemaining: 0 });
  });
});

describe('round trip through initialState', () => {
  it('consecutive window: the run of failures carries over', () => {
    const options: CircuitBreakerOptions = { window: { kind: 'consecutive', threshold: 3 } };
    const a = new CircuitBreaker({ ...options, clock: new ManualClock() });
    run(pipeline(a), 'SFF');
    const snapshot = roundTrip(a);
    expect(snapshot.window).toEqual({ kind: 'consecutive', data: [2, 0] });
    const b = restored(snapshot, options);
    expect(b.breaker.stats()).toMatchObject({ state: 'closed', failuresInWindow: 2 });
    run(b.p, 'F');
    expect(b.breaker.state).toBe('open');
  });

  it('consecutive window: the run of slow calls carries over', async () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'consecutive', threshold: 2 },
      slowCallDuration: 100,
    };
    const clock = new ManualClock();
    const a = new CircuitBreaker({ ...options, clock });
    const slow = pipeline(a).execute(
      () => new Promise((resolve) => clock.setTimer(() => resolve('ok'), 100)),
    );
    clock.advance(100);
    await slow;
    const b = restored(roundTrip(a), options);
    expect(b.breaker.stats().slowCallsInWindow).toBe(1);
    const again = b.p.execute(
      () => new Promise((resolve) => b.clock.setTimer(() => resolve('ok'), 100)),
    );
    b.clock.advance(100);
    await again;
    expect(b.breaker.state).toBe('open');
  });

  it('count window: outcomes carry over in order, so eviction continues where it was', () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'count', size: 4 },
      failureRateThreshold: 0.75,
    };
    const a = new CircuitBreaker({ ...options, clock: new ManualClock() });
    run(pipeline(a), 'SSFSFF'); // window: F S F F (wrapped ring)
    expect(a.state).toBe('open');
  });

  it('count window: a wrapped ring is exported oldest first', () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'count', size: 4 },
      failureRateThreshold: 1,
    };
    const a = new CircuitBreaker({ ...options, clock: new ManualClock() });
    run(pipeline(a), 'SSFSSF'); // the ring now holds F S S F, oldest first
    const snapshot = roundTrip(a);
    expect(snapshot.window).toEqual({ kind: 'count', data: [1, 0, 0, 1] });
    const b = restored(snapshot, options);
    run(b.p, 'FF'); // evicts F, S: S F F F
    expect(b.breaker.state).toBe('closed');
    run(b.p, 'F'); // evicts S: F F F F
    expect(b.breaker.state).toBe('open');
  });

  it('count window: a snapshot of a larger window keeps only the newest outcomes', () => {
    const big = new CircuitBreaker({
      window: { kind: 'count', size: 10 },
      clock: new ManualClock(),
    });
    run(pipeline(big), 'FFFFSS');
    const b = restored(roundTrip(big), { window: { kind: 'count', size: 3 } });
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 3, failuresInWindow: 1 });
  });

  it('time window: calls keep their age, so they expire on schedule after a restore', () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'time', duration: 1000, buckets: 10, minimumCalls: 4 },
    };
    const clock = new ManualClock();
    const a = new CircuitBreaker({ ...options, clock });
    run(pipeline(a), 'FFF'); // bucket [0, 100)
    clock.advance(600);
    const snapshot = roundTrip(a);
    expect(snapshot.window).toEqual({ kind: 'time', data: [[600, 3, 3, 0]] });
    // Restored at a bucket boundary on the new clock: the calls are 6 buckets old.
    const b = restored(snapshot, options, 50_000);
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 3, failuresInWindow: 3 });
    b.clock.advance(399);
    expect(b.breaker.stats().callsInWindow).toBe(3);
    b.clock.advance(1);
    expect(b.breaker.stats().callsInWindow).toBe(0);
  });

  it('time window: a snapshot from a clock reading days carries ages, and restores whole on a clock reading 200 ms (a fresh process)', () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'time', duration: 30_000, buckets: 10, minimumCalls: 100 },
    };
    // An old process: its monotonic clock reads about 58 days, on a bucket boundary.
    const clock = new ManualClock(4_999_998_000);
    const a = new CircuitBreaker({ ...options, clock });
    run(pipeline(a), 'S');
    clock.advance(9_000);
    run(pipeline(a), 'F');
    clock.advance(9_000);
    run(pipeline(a), 'S');
    const snapshot = roundTrip(a);
    expect(snapshot.window).toEqual({
      kind: 'time',
      data: [
        [18_000, 1, 0, 0],
        [9_000, 1, 1, 0],
        [0, 1, 0, 0],
      ],
    });
    const b = restored(snapshot, options, 200);
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 3, failuresInWindow: 1 });
    // Each call leaves the window when its bucket does, 30 s after it began (to the bucket).
    b.clock.advance(11_799);
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 3, failuresInWindow: 1 });
    b.clock.advance(1);
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 2, failuresInWindow: 1 });
    b.clock.advance(9_000);
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 1, failuresInWindow: 0 });
    b.clock.advance(9_000);
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 0, failuresInWindow: 0 });
    // The restored window keeps counting: new calls land beside the restored ones.
    run(b.p, 'F');
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 1, failuresInWindow: 1 });
  });

  it('time window: restored at clock reading 0, calls up to the window length old are kept', () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'time', duration: 1_000, buckets: 10, minimumCalls: 100 },
    };
    const clock = new ManualClock(1_000_000);
    const a = new CircuitBreaker({ ...options, clock });
    for (let i = 0; i < 10; i++) {
      run(pipeline(a), 'F');
      clock.advance(100);
    }
    expect(a.stats()).toMatchObject({ callsInWindow: 9, failuresInWindow: 9 });
    // The first call's bucket has just left the window.
    const b = restored(roundTrip(a), options, 0);
    expect(b.breaker.stats()).toMatchObject({ callsInWindow: 9, failuresInWindow: 9 });
    b.clock.advance(99);
    expect(b.breaker.stats().callsInWindow).toBe(9);
    b.clock.advance(1);
    expect(b.breaker.stats().callsInWindow).toBe(8);
  });

  it('time window: restored calls count toward opening', () => {
    const options: CircuitBreakerOptions = {
      window: { kind: 'time', duration: 1000, buckets: 10, minimumCalls: 4 },
    };
    const a = new CircuitBreaker({ ...options, clock: new ManualClock() });
    run(pipeline(a), 'FFF');
    const b = restored(roundTrip(a), options);
    run(b.p, 'F');
    expect(b.breaker.state).toBe('open');
  });

  it('open state: the remaining break time carries over to the new clock', () => {
    const options: CircuitBreakerOptions = { breakDuration: 1000 };
    const clock = new ManualClock();
    const a = new CircuitBreaker({ ...options, clock });
    a.trip();
    clock.advance(400);
    const b = restored(roundTrip(a), options, 77_777);
    expect(b.breaker.state).toBe('open');
    expect(b.breaker.toJSON().openRemaining).toBe(600);
    b.clock.advance(599);
    expect(b.breaker.state).toBe('open');
    b.clock.advance(1);
    expect(b.breaker.state).toBe('half-open');
  });

  it('open state: consecutive openings carry over, so the backoff continues', () => {
    const options: CircuitBreakerOptions = { breakDuration: 1000, breakBackoff: {} };
    const clock = new ManualClock();
    const a = new CircuitBreaker({ ...options, clock });
    a.trip();
    a.trip(); // second opening: 2000 ms
    const snapshot = roundTrip(a);
    expect(snapshot).toMatchObject({ consecutiveOpens: 2, openRemaining: 2000 });
    const b = restored(snapshot, options);
    const durations: number[] = [];
    b.breaker.onStateChange((e) => durations.push(e.breakDuration));
    b.breaker.trip();
    expect(durations).toEqual([4000]);
  });

  it('half-open state: restores as a fresh open period that ends at once', () => {
    const options: CircuitBreakerOptions = { breakDuration: 1000 };
    const clock = new ManualClock();
    const a = new CircuitBreaker({ ...options, clock });
    a.trip();
    clock.advance(1000);
    expect(a.state).toBe('half-open');
    const b = restored(roundTrip(a), options);
    expect(b.breaker.state).toBe('half-open');
    expect(b.breaker.generation).toBeGreaterThan(0);
    run(b.p, 'S');
    expect(b.breaker.state).toBe('closed');
  });

  it.each(['forced-open', 'disabled', 'metrics-only'] as const)(
    'manual state %s is restored',
    (state) => {
      const a = new CircuitBreaker({ clock: new ManualClock() });
      if (state === 'forced-open') a.forceOpen();
      else if (state === 'disabled') a.disable();
      else a.metricsOnly();
      const b = restored(roundTrip(a), {});
      expect(b.breaker.state).toBe(state);
      b.breaker.reset();
      expect(b.breaker.state).toBe('closed');
    },
  );
});

describe('restore in another process', () => {
  it('a time window from a process whose clock read 58 days restores whole in a fresh process', async () => {
    const library = await buildLibrary('breaker-restore');
    const options: CircuitBreakerOptions = {
      window: { kind: 'time', duration: 300_000, buckets: 10, minimumCalls: 100 },
    };
    const clock = new ManualClock(4_999_980_000);
    const a = new CircuitBreaker({ ...options, clock });
    run(pipeline(a), 'SF');
    clock.advance(60_000);
    run(pipeline(a), 'F');
    clock.advance(60_000);
    run(pipeline(a), 'S');
    const exit = await runNodeScript(
      fileURLToPath(new URL('./fixtures/restore-snapshot.mjs', import.meta.url)),
      [library, JSON.stringify(options), JSON.stringify(a)],
      root,
      30_000,
    );
    expect(exit.stderr).toBe('');
    const restoredThere = JSON.parse(exit.stdout) as Record<string, number | string>;
    // The premise: the new process's clock reads less than the age of the oldest calls.
    expect(restoredThere.clockReading).toBeLessThan(120_000);
    expect(restoredThere).toMatchObject({ state: 'closed', callsInWindow: 4, failuresInWindow: 2 });
  }, 90_000);
});

describe('bad snapshots', () => {
  const good: CircuitBreakerSnapshot = {
    version: 1,
    state: 'closed',
    openRemaining: 0,
    consecutiveOpens: 0,
    window: { kind: 'count', data: [] },
  };

  const bad: [string, unknown][] = [
    ['null', null],
    ['a string', 'closed'],
    ['another version', { ...good, version: 2 }],
    ['an unknown state', { ...good, state: 'ajar' }],
    ['a negative openRemaining', { ...good, state: 'open', openRemaining: -1 }],
    ['a NaN openRemaining', { ...good, state: 'open', openRemaining: Number.NaN }],
    ['an openRemaining given as a string', { ...good, openRemaining: '5' }],
    ['no window', { ...good, window: undefined }],
    ['a window of another kind', { ...good, window: { kind: 'time', data: [] } }],
  ];

  it.each(bad)('rejects %s with an OptionsError naming initialState', (_, snapshot) => {
    const error = optionsError(
      () => new CircuitBreaker({ initialState: snapshot as CircuitBreakerSnapshot }),
    );
    expect(error.option).toBe('initialState');
    expect(error.expected).toBe('a snapshot from toJSON() of a breaker with a count window');
  });

  it.each([
    ['count data that is null', { ...good, window: { kind: 'count', data: null } }],
    [
      'count data with an unknown outcome code',
      { ...good, window: { kind: 'count', data: [0, 4] } },
    ],
    ['count data with a fractional code', { ...good, window: { kind: 'count', data: [0.5] } }],
    [
      'consecutive data that is null',
      { ...good, window: { kind: 'consecutive', data: null } },
      { window: { kind: 'consecutive' } },
    ],
    [
      'consecutive data with a negative run',
      { ...good, window: { kind: 'consecutive', data: [-1, 0] } },
      { window: { kind: 'consecutive' } },
    ],
    [
      'time data that is null',
      { ...good, window: { kind: 'time', data: null } },
      { window: { kind: 'time' } },
    ],
    [
      'a time row with more failures than calls',
      { ...good, window: { kind: 'time', data: [[0, 1, 2, 0]] } },
      { window: { kind: 'time' } },
    ],
    [
      'a time row with a negative age',
      { ...good, window: { kind: 'time', data: [[-100, 1, 0, 0]] } },
      { window: { kind: 'time' } },
    ],
    ['an infinite openRemaining', { ...good, state: 'open', openRemaining: Infinity }],
    ['an openRemaining above 2^31-1 ms', { ...good, state: 'open', openRemaining: 2 ** 31 }],
    ['a fractional consecutiveOpens', { ...good, consecutiveOpens: 1.5 }],
    ['a negative consecutiveOpens', { ...good, consecutiveOpens: -1 }],
  ] as [string, unknown, CircuitBreakerOptions?][])(
    'rejects %s with an OptionsError',
    (_, snapshot, options) => {
      expect(
        () => new CircuitBreaker({ ...options, initialState: snapshot as CircuitBreakerSnapshot }),
      ).toThrow(OptionsError);
    },
  );
});
