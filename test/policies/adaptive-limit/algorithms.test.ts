/**
 * The limit algorithms and the baseline, each on windows written by hand, against figures
 * computed by hand (in the comments). The gate's own tests (adaptive-limit.test.ts) check that
 * its windows carry these figures.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type LimitWindow, setListenerErrorHandler } from '../../../src/index.js';
import {
  type BaselineState,
  type Decision,
  decide,
  freshBaseline,
  updateBaseline,
} from '../../../src/policies/adaptive-limit/algorithms.js';
import {
  type ResolvedAlgorithm,
  resolveAdaptiveLimitOptions,
} from '../../../src/policies/adaptive-limit/options.js';

/** A judged window of 100 answered calls over 1 s, with the limit reached, and `over` on top. */
function win(over: Partial<LimitWindow>): LimitWindow {
  const limit = over.limit ?? 20;
  return {
    limit,
    latency: 20,
    baseline: 20,
    answered: 100,
    dropped: 0,
    ignored: 0,
    maxInFlight: limit,
    meanInFlight: limit,
    held: 0,
    duration: 1000,
    judged: true,
    ...over,
  };
}

const algorithm = (a: unknown): ResolvedAlgorithm =>
  resolveAdaptiveLimitOptions({ algorithm: a as 'gradient' }).algorithm;

/** What `a` decides after `w`, with a baseline that is not being probed. */
function run(a: ResolvedAlgorithm, w: LimitWindow): Decision {
  return { ...decide(a, w, { limit: 0, reason: 'few-samples' }, freshBaseline()) };
}

afterEach(() => setListenerErrorHandler((error) => console.error(error)));

describe('gradient (tolerance 1.25, growth 0.1: no queue up to 1.05 × baseline, cuts to 1.125 ×)', () => {
  const g = algorithm('gradient');

  it('raises by a tenth (rounded, at least 1) while the latency shows no queue and half the limit is in use', () => {
    expect(run(g, win({ limit: 20 }))).toEqual({ limit: 22, reason: 'increase' });
    // 21 / 20.1 = 1.0448 <= 1.05: 22 + round(2.2)
    expect(run(g, win({ limit: 22, latency: 21, baseline: 20.1, maxInFlight: 11 }))).toEqual({
      limit: 24,
      reason: 'increase',
    });
    expect(run(g, win({ limit: 5 }))).toEqual({ limit: 6, reason: 'increase' });
    expect(run(g, win({ limit: 20, maxInFlight: 9 }))).toEqual({
      limit: 20,
      reason: 'app-limited',
    });
  });

  it('cuts to the middle of the band when the latency passes the tolerance while the limit held calls back', () => {
    // 30 / 20.1 = 1.4925; 24 × 1.125 / 1.4925 = 18.09
    expect(run(g, win({ limit: 24, latency: 30, baseline: 20.1 }))).toEqual({
      limit: 18,
      reason: 'latency',
    });
    expect(
      run(g, win({ limit: 24, latency: 30, baseline: 20.1, maxInFlight: 10, held: 3 })),
    ).toEqual({ limit: 18, reason: 'latency' });
    // At most by half: 40 × 1.125 / 10 = 4.5, kept at 20.
    expect(run(g, win({ limit: 40, latency: 200 }))).toEqual({ limit: 20, reason: 'latency' });
    // The limit held nobody back: the latency is not its doing.
    expect(run(g, win({ limit: 24, latency: 30, maxInFlight: 23 }))).toEqual({
      limit: 24,
      reason: 'app-limited',
    });
  });

  it('holds within the band: no growth on a latency above the baseline (no drift under overload)', () => {
    // 33 / 29.9 = 1.104
    expect(run(g, win({ limit: 20, latency: 33, baseline: 29.9, held: 500 }))).toEqual({
      limit: 20,
      reason: 'tolerated',
    });
    expect(run(g, win({ limit: 57, latency: 22.5, baseline: 19.6, held: 2500 }))).toEqual({
      limit: 57,
      reason: 'tolerated',
    });
  });

  it('cuts by the share dropped (at least one, at most half), whatever the latency', () => {
    expect(run(g, win({ answered: 90, dropped: 10 }))).toEqual({ limit: 18, reason: 'drop' });
    // 20 × (1 - 1/2500) = 19.992
    expect(run(g, win({ answered: 2499, dropped: 1 }))).toEqual({ limit: 19, reason: 'drop' });
    expect(run(g, win({ answered: 0, dropped: 20, latency: 5000, baseline: 5000 }))).toEqual({
      limit: 10,
      reason: 'drop',
    });
    expect(run(g, win({ answered: 0, dropped: 3, judged: false }))).toEqual({
      limit: 10,
      reason: 'drop',
    });
  });

  it('holds on a window with too few calls', () => {
    expect(run(g, win({ judged: false, latency: 80 }))).toEqual({
      limit: 20,
      reason: 'few-samples',
    });
  });

  it('takes its tolerance and growth', () => {
    const tight = algorithm({ kind: 'gradient', tolerance: 1.5, growth: 0.5 });
    // no queue up to 1.1 ×; cut to 1.25 ×
    expect(run(tight, win({ limit: 20, latency: 21.9 }))).toEqual({
      limit: 30,
      reason: 'increase',
    });
    expect(run(tight, win({ limit: 20, latency: 29 }))).toEqual({ limit: 20, reason: 'tolerated' });
    // 40 / 20 = 2: 20 × 1.25 / 2 = 12.5
    expect(run(tight, win({ limit: 20, latency: 40 }))).toEqual({ limit: 12, reason: 'latency' });
  });
});

describe('vegas (alpha 3, beta 6 × log10(limit))', () => {
  const v = algorithm('vegas');

  it('slow start: grows by half (at least beta) while no queue shows at all', () => {
    expect(run(v, win({ limit: 20 }))).toEqual({ limit: 30, reason: 'increase' });
  });

  it('grows by log10(limit) below alpha, holds between alpha and beta', () => {
    // 30 × (1 - 20/22) = 2.73: above log10 = 1, below alpha = 3
    expect(run(v, win({ limit: 30, latency: 22 }))).toEqual({ limit: 31, reason: 'increase' });
    // 29 × (1 - 20/23) = 3.78
    expect(run(v, win({ limit: 29, latency: 23 }))).toEqual({ limit: 29, reason: 'tolerated' });
  });

  it('sheds the excess queue in one step to the middle of the band when it passes beta', () => {
    // 31 × (1 - 20/25) = 6.2 > 6: 31 - 6.2 + 4.5 = 29.3
    expect(run(v, win({ limit: 31, latency: 25 }))).toEqual({ limit: 29, reason: 'queue' });
    // log10(200) = 2: alpha 6, beta 12; queue 200 × (1 - 20/30) = 66.7: 200 - 66.7 + 9 = 142.3
    expect(run(v, win({ limit: 200, latency: 30 }))).toEqual({ limit: 142, reason: 'queue' });
    expect(run(v, win({ limit: 200, latency: 30, maxInFlight: 150 }))).toEqual({
      limit: 200,
      reason: 'app-limited',
    });
  });

  it('cuts by the share dropped like the gradient', () => {
    expect(run(v, win({ answered: 50, dropped: 50 }))).toEqual({ limit: 10, reason: 'drop' });
  });
});

describe('aimd (backoff 0.9, increase 1)', () => {
  const m = algorithm({ kind: 'aimd', maxLatency: 100 });

  it('adds `increase` with half the limit in use, multiplies by backoffRatio on a drop or a slow window', () => {
    expect(run(m, win({ limit: 20, maxInFlight: 10 }))).toEqual({ limit: 21, reason: 'increase' });
    expect(run(m, win({ limit: 21, maxInFlight: 10 }))).toEqual({
      limit: 21,
      reason: 'app-limited',
    });
    // 21 × 0.9 = 18.9
    expect(run(m, win({ limit: 21, answered: 99, dropped: 1 }))).toEqual({
      limit: 18,
      reason: 'drop',
    });
    expect(run(m, win({ limit: 20, latency: 150 }))).toEqual({ limit: 18, reason: 'latency' });
    // At least by one: 5 × 0.95 = 4.75
    expect(
      run(algorithm({ kind: 'aimd', backoffRatio: 0.95 }), win({ limit: 5, dropped: 1 })),
    ).toEqual({ limit: 4, reason: 'drop' });
    expect(run(algorithm({ kind: 'aimd', increase: 5 }), win({ limit: 20 }))).toEqual({
      limit: 25,
      reason: 'increase',
    });
  });
});

describe('a custom function', () => {
  it('gets the window and sets the limit (rounded down)', () => {
    const seen: LimitWindow[] = [];
    const f = algorithm((w: LimitWindow) => {
      seen.push({ ...w });
      return w.limit * 0.4;
    });
    expect(run(f, win({ limit: 20, latency: 31 }))).toEqual({ limit: 8, reason: 'custom' });
    expect(seen[0]).toMatchObject({ limit: 20, latency: 31, baseline: 20, answered: 100 });
  });

  it('keeps the limit when it throws (reported) or answers no finite number', () => {
    const reported: unknown[] = [];
    setListenerErrorHandler((e) => reported.push(e));
    const boom = new Error('boom');
    expect(
      run(
        algorithm(() => {
          throw boom;
        }),
        win({ limit: 20 }),
      ),
    ).toEqual({ limit: 20, reason: 'custom' });
    expect(reported).toEqual([boom]);
    expect(
      run(
        algorithm(() => Number.NaN),
        win({ limit: 20 }),
      ),
    ).toEqual({
      limit: 20,
      reason: 'custom',
    });
  });
});

describe('the baseline', () => {
  const fresh = freshBaseline;

  it('starts at the first judged latency, falls halfway to a lower one, follows a tenth of the way within the no-queue band', () => {
    const s = fresh();
    // A first window with the limit not reached: its latency holds none of our queue.
    expect(updateBaseline(s, win({ latency: 20, maxInFlight: 15 }), 1.05)).toBeUndefined();
    expect(s.baseline).toBe(20);
    expect(s.probing).toBe(false);
    updateBaseline(s, win({ latency: 10 }), 1.05);
    expect(s.baseline).toBe(15);
    updateBaseline(s, win({ latency: 15.5 }), 1.05);
    expect(s.baseline).toBeCloseTo(15.05, 10);
  });

  it('stays put under a latency above the band while the limit holds calls back', () => {
    const s = { ...fresh(), baseline: 20, throughput: 0.1 };
    for (let i = 0; i < 600; i++) {
      expect(updateBaseline(s, win({ latency: 22.5, held: 100 }), 1.05)).toBeUndefined();
    }
    expect(s.baseline).toBe(20);
  });

  it('takes a latency a cut did not lower: the calls in flight fell by a tenth, the latency by under 2 %', () => {
    const s = { ...fresh(), baseline: 20.1, lastCut: true, lastInFlight: 24, lastLatency: 30 };
    expect(updateBaseline(s, win({ latency: 29.9, meanInFlight: 17 }), 1.05)).toBe('raised');
    expect(s.baseline).toBe(29.9);
    // A cut that lowered the latency was our queue: nothing moves.
    const q = { ...fresh(), baseline: 20, lastCut: true, lastInFlight: 24, lastLatency: 30 };
    expect(updateBaseline(q, win({ latency: 25, meanInFlight: 18 }), 1.05)).toBeUndefined();
    expect(q.baseline).toBe(20);
  });

  it('follows a higher latency a tenth of the way when the limit held nobody back and calls did not come faster', () => {
    // 100 calls over 1 s: 0.1 a ms, as when the baseline last moved.
    const s = { ...fresh(), baseline: 20, throughput: 0.1 };
    const idle = { latency: 30, maxInFlight: 10, held: 0 };
    expect(updateBaseline(s, win(idle), 1.05)).toBe('followed');
    expect(s.baseline).toBe(21);
    // More calls a second: the latency may be their queue.
    const busier = { ...fresh(), baseline: 20, throughput: 0.1 };
    expect(updateBaseline(busier, win({ ...idle, answered: 120 }), 1.05)).toBeUndefined();
    expect(busier.baseline).toBe(20);
  });
});

describe('the probe of a baseline first measured with the limit full', () => {
  const g = algorithm('gradient');
  const v = algorithm('vegas');
  const a = algorithm('aimd');

  /** Feeds window `w` to the baseline, then lets `alg` decide with it, as the gate does. */
  function step(s: BaselineState, alg: ResolvedAlgorithm, w: LimitWindow): Decision {
    updateBaseline(s, w, 1.05);
    return {
      ...decide(alg, { ...w, baseline: s.baseline }, { limit: 0, reason: 'few-samples' }, s),
    };
  }

  it('halves while the latency falls with the calls in flight, then gives back the cut that did not lower it', () => {
    for (const alg of [g, v]) {
      const s = freshBaseline();
      // 20 in flight at 40 ms: maybe 10 at the dependency and 10 queued there.
      expect(step(s, alg, win({ limit: 20, latency: 40 }))).toEqual({ limit: 10, reason: 'probe' });
      expect(s).toMatchObject({ baseline: 40, probing: true });
      // 10 in flight at 20 ms: the latency fell by half with them, so there was a queue.
      expect(step(s, alg, win({ limit: 10, latency: 20 }))).toEqual({ limit: 5, reason: 'probe' });
      expect(s).toMatchObject({ baseline: 30, probing: true });
      // 5 at 19.5 ms: a fall of 2.5 %, under half the cut: 10 had no queue either.
      expect(step(s, alg, win({ limit: 5, latency: 19.5 }))).toEqual({
        limit: 10,
        reason: 'probe',
      });
      expect(s).toMatchObject({ baseline: 24.75, probing: false, kneeLimit: 0 });
    }
  });

  it('ends at the first cut when the latency stays: one window at half the limit', () => {
    const s = freshBaseline();
    expect(step(s, g, win({ limit: 20, latency: 20 }))).toEqual({ limit: 10, reason: 'probe' });
    expect(step(s, g, win({ limit: 10, latency: 20.4 }))).toEqual({ limit: 20, reason: 'probe' });
    // Then the algorithm's own rule: no queue shows, so it grows by a tenth.
    expect(step(s, g, win({ limit: 20, latency: 20 }))).toEqual({ limit: 22, reason: 'increase' });
  });

  it('ends without giving anything back when the limit stops holding calls back', () => {
    const s = freshBaseline();
    step(s, g, win({ limit: 20, latency: 40 }));
    step(s, g, win({ limit: 10, latency: 20, maxInFlight: 6 }));
    expect(s).toMatchObject({ probing: false, kneeLimit: 0 });
  });

  it('waits for a judged window without drops, and leaves AIMD, which reads no baseline, alone', () => {
    const s = freshBaseline();
    step(s, g, win({ limit: 20, latency: 40 }));
    expect(
      decide(g, win({ limit: 10, judged: false }), { limit: 0, reason: 'few-samples' }, s),
    ).toEqual({
      limit: 10,
      reason: 'few-samples',
    });
    expect(
      decide(g, win({ limit: 10, dropped: 50 }), { limit: 0, reason: 'few-samples' }, s).reason,
    ).toBe('drop');
    expect(decide(a, win({ limit: 10 }), { limit: 0, reason: 'few-samples' }, s)).toEqual({
      limit: 11,
      reason: 'increase',
    });
  });
});
