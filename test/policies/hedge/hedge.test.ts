import { describe, expect, it } from 'vitest';
import {
  type AttemptBudget,
  bulkhead,
  collectMetrics,
  diagnosticsChannels,
  type HedgeOptions,
  hedge,
  hedgeKind,
  OptionsError,
  type Policy,
  pipeline,
  Registry,
  retry,
  TimeoutError,
  timeout,
  UsageError,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';
import { errorOf } from '../../support/errors.js';
import { byHand, HEDGE_MODES, hedged, recordHedges } from '../../support/hedge.js';

describe.each(HEDGE_MODES)('Hedge %s', (mode) => {
  const through = (...policies: Policy[]) => hedged(mode, ...policies);

  describe('Hedge with a fixed delay', () => {
    it('starts a second attempt after the delay and settles with the first answer', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 100 });
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)), clock);
      await clock.advanceAsync(99);
      expect(work.starts).toEqual([0]);
      await clock.advanceAsync(1);
      expect(work.starts).toEqual([0, 100]);
      work.answers[1]!.resolve('second');
      await call.done;
      expect(call).toMatchObject({ ok: true, value: 'second', at: 100 });
      expect(h.stats()).toEqual({ calls: 1, hedges: 1, won: 1, refused: 0 });
      work.answers[0]!.resolve('first, too late');
    });

    it('starts no hedge when the first attempt answers before the delay, and holds no timer entry after', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: '100ms' });
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(60);
      work.answers[0]!.resolve('first');
      await call.done;
      expect(call.value).toBe('first');
      await clock.advanceAsync(100);
      expect(work.starts).toEqual([0]);
      expect(h.stats()).toEqual({ calls: 1, hedges: 0, won: 0, refused: 0 });
      expect(h.pending).toBe(0);
    });

    it('aborts the losers’ signals as soon as the winner answers, with an AbortError', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 10, maxHedges: 2 });
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(20);
      expect(work.starts).toEqual([0, 10, 20]);
      work.answers[1]!.resolve('second');
      await call.done;
      expect(work.signals[1]!.aborted).toBe(false);
      for (const n of [0, 2]) {
        expect(work.signals[n]!.aborted).toBe(true);
        expect(work.signals[n]!.reason).toMatchObject({ name: 'AbortError' });
      }
      work.answers[0]!.reject(work.signals[0]!.reason);
      work.answers[2]!.reject(work.signals[2]!.reason);
    });

    it('starts at most maxHedges hedges, each a delay after the one before', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 10, maxHedges: 3 });
      const { events, listen } = recordHedges(h);
      listen(clock);
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(100);
      expect(work.starts).toEqual([0, 10, 20, 30]);
      expect(events).toEqual([
        { hedge: 1, reason: 'delay', at: 10 },
        { hedge: 2, reason: 'delay', at: 20 },
        { hedge: 3, reason: 'delay', at: 30 },
      ]);
      work.answers[0]!.resolve('first');
      await call.done;
      expect(call.value).toBe('first');
      expect(h.stats()).toEqual({ calls: 1, hedges: 3, won: 0, refused: 0 });
    });

    it('refuses more than 10 hedges', () => {
      expect(() => hedge({ maxHedges: 10 })).not.toThrow();
      expect(errorOf(OptionsError, () => hedge({ maxHedges: 11 })).message).toContain('maxHedges');
    });
  });

  describe('Hedge delay modes', () => {
    it('delay 0 starts every attempt at once', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 0, maxHedges: 2 });
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      expect(work.starts).toEqual([0, 0, 0]);
      work.answers[2]!.resolve('third');
      await call.done;
      expect(call.value).toBe('third');
      expect(h.stats()).toEqual({ calls: 1, hedges: 2, won: 1, refused: 0 });
      expect(clock.pendingTimers).toBe(0);
    });

    it("'on-failure' starts the next attempt only when the one before fails", async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 'on-failure', maxHedges: 2 });
      const { events, listen } = recordHedges(h);
      listen(clock);
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(10_000);
      expect(work.starts).toEqual([0]);
      expect(clock.pendingTimers).toBe(0);
      work.answers[0]!.reject(new Error('down'));
      await clock.advanceAsync(5);
      expect(work.starts).toEqual([0, 10_000]);
      work.answers[1]!.resolve('second');
      await call.done;
      expect(call.value).toBe('second');
      expect(events).toEqual([{ hedge: 1, reason: 'failure', at: 10_000 }]);
    });

    it('a delay function is asked for each hedge, with its number and the attempt', async () => {
      const clock = new ManualClock();
      const asked: unknown[] = [];
      const h = hedge({
        clock,
        maxHedges: 3,
        delay: (context) => {
          asked.push(context);
          return context.hedge === 3 ? -1 : context.hedge * 100;
        },
      });
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(1_000);
      expect(work.starts).toEqual([0, 100, 300]);
      expect(asked).toEqual([
        { hedge: 1, attempt: 1 },
        { hedge: 2, attempt: 1 },
        { hedge: 3, attempt: 1 },
      ]);
      work.answers[1]!.resolve('second');
      await call.done;
      expect(call.value).toBe('second');
    });

    it('a percentile delay starts no hedge before minSamples durations, then hedges at the percentile', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: { percentile: 0.9, minSamples: 20 } });
      const p = through(h);
      const answerIn = (ms: number) => () =>
        new Promise<string>((resolve) => clock.setTimer(() => resolve(`${ms}`), ms));
      // 19 durations: 18 of 20 ms, 1 of 80 ms; a call of 200 ms is not hedged.
      for (let i = 0; i < 18; i++) {
        const c = p.execute(answerIn(20));
        await clock.advanceAsync(20);
        await c;
      }
      const slow = p.execute(answerIn(80));
      await clock.advanceAsync(80);
      await slow;
      const unhedged = p.execute(answerIn(200));
      await clock.advanceAsync(200);
      expect(await unhedged).toBe('200');
      expect(h.stats().hedges).toBe(0);
      // The 20th duration (200 ms) is in: the 90th percentile of 18 × 20, 80 and 200 is 20 ms.
      const work = byHand();
      const call = track(p.execute(work.fn(clock)));
      const started = clock.now();
      await clock.advanceAsync(19);
      expect(work.starts).toEqual([started]);
      await clock.advanceAsync(1);
      expect(work.starts).toEqual([started, started + 20]);
      work.answers[1]!.resolve('hedged');
      await call.done;
      expect(call.value).toBe('hedged');
    });

    it('a percentile delay forgets durations older than its window', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: { percentile: 0.5, minSamples: 5, window: 1_000 } });
      const p = through(h);
      const answerIn = (ms: number) => () =>
        new Promise<string>((resolve) => clock.setTimer(() => resolve(`${ms}`), ms));
      for (let i = 0; i < 5; i++) {
        const c = p.execute(answerIn(50));
        await clock.advanceAsync(50);
        await c;
      }
      await clock.advanceAsync(2_000);
      // The window holds nothing now: no hedge however long the call takes.
      const c = p.execute(answerIn(500));
      await clock.advanceAsync(500);
      await c;
      expect(h.stats().hedges).toBe(0);
    });
  });

  describe('Hedge outcomes', () => {
    it('a failure handle accepts starts the next hedge at once; the call takes an answer after it', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 100 });
      const { events, listen } = recordHedges(h);
      listen(clock);
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(30);
      work.answers[0]!.reject(new Error('503'));
      await clock.advanceAsync(0);
      expect(work.starts).toEqual([0, 30]);
      expect(events).toEqual([{ hedge: 1, reason: 'failure', at: 30 }]);
      work.answers[1]!.resolve('ok');
      await call.done;
      expect(call.value).toBe('ok');
    });

    it('a failure handle turns down ends every attempt: the call fails with it at once', async () => {
      const clock = new ManualClock();
      const h = hedge({
        clock,
        delay: 10,
        maxHedges: 2,
        handle: (e) => (e as Error).message !== 'fatal',
      });
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(10);
      const fatal = new Error('fatal');
      work.answers[1]!.reject(fatal);
      await call.done;
      expect(call.error).toBe(fatal);
      expect(work.signals[0]!.aborted).toBe(true);
      await clock.advanceAsync(100);
      expect(work.starts).toEqual([0, 10]);
      work.answers[0]!.reject(work.signals[0]!.reason);
    });

    it('a result handleResult rejects starts the next hedge at once; the first result it accepts wins', async () => {
      const clock = new ManualClock();
      const h = hedge<{ status: number }>({
        clock,
        delay: 'on-failure',
        maxHedges: 2,
        handleResult: (r) => r.status >= 500,
      });
      const work = byHand<{ status: number }>();
      const call = track(through(h).execute(work.fn(clock)));
      work.answers[0]!.resolve({ status: 503 });
      await clock.advanceAsync(0);
      work.answers[1]!.resolve({ status: 200 });
      await call.done;
      expect(call.value).toEqual({ status: 200 });
      expect(work.starts.length).toBe(2);
    });

    it('when every attempt failed, the call ends with the last failure', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 10, maxHedges: 2 });
      const work = byHand();
      const call = track(through(h).execute(work.fn(clock)));
      await clock.advanceAsync(20);
      work.answers[2]!.reject(new Error('third'));
      work.answers[0]!.reject(new Error('first'));
      await clock.advanceAsync(0);
      expect(call.settled).toBe(false);
      work.answers[1]!.reject(new Error('second'));
      await call.done;
      expect((call.error as Error).message).toBe('second');
    });

    it('a refusal by a policy inside the hedge is not handled: it ends the call', async () => {
      const clock = new ManualClock();
      const inner = bulkhead({ maxConcurrent: 1 });
      const h = hedge({ clock, delay: 10 });
      const work = byHand();
      const call = track(pipeline(h, inner).execute(work.fn(clock)));
      await clock.advanceAsync(10);
      await call.done;
      expect(call.error).toMatchObject({ name: 'BulkheadRejectedError' });
      expect(work.signals[0]!.aborted).toBe(true);
      work.answers[0]!.reject(work.signals[0]!.reason);
    });

    it('runs a synchronous function once and settles with its value', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 10 });
      let calls = 0;
      expect(
        await through(h).execute(() => {
          calls++;
          return 42;
        }),
      ).toBe(42);
      expect(calls).toBe(1);
      expect(h.pending).toBe(0);
      await expect(
        through(h).execute(() => {
          throw new UsageError('refused');
        }),
      ).rejects.toThrow('refused');
    });

    it('tells each attempt which it is, and the attempt of an outer retry', async () => {
      const clock = new ManualClock();
      const seen: [number, number][] = [];
      const p = pipeline(
        retry({ clock, maxAttempts: 2, delay: 5, backoff: 'constant', jitter: 'none' }),
        hedge({ clock, delay: 'on-failure' }),
      );
      const call = track(
        p.execute(({ attempt, hedge: n }) => {
          seen.push([attempt, n]);
          throw new Error('down');
        }),
      );
      await clock.runAll();
      await call.done;
      expect(seen).toEqual([
        [1, 0],
        [1, 1],
        [2, 0],
        [2, 1],
      ]);
    });

    it('refuses executeSync', () => {
      expect(() => pipeline(hedge()).executeSync(() => 1)).toThrow(UsageError);
    });
  });

  describe('Hedge losers and cancellation', () => {
    it('does not wait for a loser that ignores its signal; the loser keeps its bulkhead permit until it ends, and its late rejection is observed', async () => {
      const clock = new ManualClock();
      const inner = bulkhead({ maxConcurrent: 5 });
      const h = hedge({ clock, delay: 10 });
      const p = pipeline(h, inner);
      const call = track(
        p.execute(
          ({ hedge: n }) =>
            new Promise<string>((resolve, reject) =>
              n === 0
                ? clock.setTimer(() => reject(new Error('late')), 1_000)
                : clock.setTimer(() => resolve('hedge'), 5),
            ),
        ),
        clock,
      );
      await clock.advanceAsync(15);
      await call.done;
      expect(call).toMatchObject({ ok: true, value: 'hedge', at: 15 });
      expect(inner.stats().inFlight).toBe(1);
      await clock.advanceAsync(1_000);
      expect(inner.stats().inFlight).toBe(0);
      expect(clock.pendingTimers).toBe(0);
    });

    it('an outer timeout during the race aborts every attempt and settles the call at once', async () => {
      const clock = new ManualClock();
      const t = timeout({ timeout: 50, clock });
      const h = hedge({ clock, delay: 20, maxHedges: 2 });
      const work = byHand();
      const call = track(through(t, h).execute(work.fn(clock)), clock);
      await clock.advanceAsync(50);
      await call.done;
      expect(call.at).toBe(50);
      expect(call.error).toBeInstanceOf(TimeoutError);
      expect(work.starts).toEqual([0, 20, 40]);
      for (const s of work.signals) expect(s.reason).toBe(call.error);
      expect(h.pending).toBe(0);
      for (const a of work.answers) a.reject(new Error('aborted'));
    });

    it('the caller’s abort during the race aborts every attempt and rejects with its reason at once', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: 20 });
      const work = byHand();
      const controller = new AbortController();
      const call = track(through(h).execute(work.fn(clock), { signal: controller.signal }), clock);
      await clock.advanceAsync(25);
      const reason = new Error('user left');
      controller.abort(reason);
      await call.done;
      expect(call).toMatchObject({ ok: false, error: reason, at: 25 });
      expect(work.signals.map((s) => s.reason)).toEqual([reason, reason]);
      await clock.advanceAsync(100);
      expect(work.starts).toEqual([0, 20]);
      for (const a of work.answers) a.resolve('too late');
    });

    it('the caller’s abort from inside the first attempt fails the call once and releases the steps outside once', async () => {
      const clock = new ManualClock();
      const outside = bulkhead({ maxConcurrent: 1 });
      const controller = new AbortController();
      const reason = new Error('user left');
      const call = track(
        through(outside, hedge({ clock, delay: 10 })).execute(
          () => {
            controller.abort(reason);
            return new Promise<string>(() => {});
          },
          { signal: controller.signal },
        ),
      );
      await call.done;
      expect(call).toMatchObject({ ok: false, error: reason });
      expect(outside.stats().inFlight).toBe(0);
      expect(await through(outside).execute(() => 'next')).toBe('next');
      expect(clock.pendingTimers).toBe(0);
    });

    it('dispose clears the pending hedge timers: the call goes on with the attempts already running', async () => {
      const clock = new ManualClock();
      const h = hedge({ clock, delay: { percentile: 0.5, minSamples: 1 } });
      const p = through(h);
      const first = p.execute(
        () => new Promise<string>((resolve) => clock.setTimer(() => resolve('x'), 10)),
      );
      await clock.advanceAsync(10);
      await first;
      const work = byHand();
      const call = track(p.execute(work.fn(clock)));
      expect(h.pending).toBe(1);
      expect(clock.pendingTimers).toBe(1);
      h.dispose();
      expect(h.pending).toBe(0);
      expect(clock.pendingTimers).toBe(0);
      await clock.advanceAsync(100);
      expect(work.starts.length).toBe(1);
      work.answers[0]!.resolve('first');
      await call.done;
      expect(call.value).toBe('first');
    });
  });
});

describe('Hedge with steps inside it', () => {
  it('a loser waiting out a retry delay inside the hedge stops waiting when another attempt wins', async () => {
    const clock = new ManualClock();
    const inner = retry({
      clock,
      maxAttempts: 5,
      delay: 1_000,
      backoff: 'constant',
      jitter: 'none',
    });
    const reasons: string[] = [];
    inner.onGiveUp((e) => reasons.push(e.reason));
    const h = hedge({ clock, delay: 10 });
    let calls = 0;
    const call = track(
      pipeline(h, inner).execute(({ hedge: n }) => {
        calls++;
        if (n === 0) throw new Error('down');
        return 'hedge';
      }),
      clock,
    );
    await clock.advanceAsync(10);
    await call.done;
    expect(call).toMatchObject({ ok: true, value: 'hedge', at: 10 });
    expect(calls).toBe(2);
    expect(inner.stats().waiting).toBe(0);
    expect(reasons).toEqual(['aborted']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('an aggressive timeout inside the hedge times each attempt; its failure starts the next at once', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 'on-failure', maxHedges: 2 });
    const t = timeout({ timeout: 30, strategy: 'aggressive', clock });
    const work = byHand();
    const call = track(pipeline(h, t).execute(work.fn(clock)), clock);
    await clock.advanceAsync(30);
    expect(work.starts).toEqual([0, 30]);
    work.answers[1]!.resolve('second');
    await call.done;
    expect(call).toMatchObject({ ok: true, value: 'second', at: 30 });
    work.answers[0]!.resolve('abandoned');
  });
});

describe('Hedge with a queue or a hedge inside it', () => {
  it('a retry inside the hedge gives up at once on a delay that would end past an outer timeout', async () => {
    const clock = new ManualClock();
    const inner = retry({ clock, maxAttempts: 3, backoff: 'constant', delay: 500, jitter: 'none' });
    const reasons: string[] = [];
    inner.onGiveUp((e) => reasons.push(e.reason));
    const p = pipeline(
      timeout({ timeout: 300, clock }),
      hedge({ clock, delay: 'on-failure' }),
      inner,
    );
    const failure = new Error('503');
    const call = track(
      p.execute(() => Promise.reject(failure)),
      clock,
    );
    await clock.advanceAsync(0);
    await call.done;
    expect(call).toMatchObject({ ok: false, error: failure, at: 0 });
    expect(reasons).toEqual(['deadline', 'deadline']);
  });

  it('an outer timeout takes a hedge out of the bulkhead queue inside the hedge; the stuck attempt keeps its permit until it ends', async () => {
    const clock = new ManualClock();
    const inner = bulkhead({ maxConcurrent: 1, maxQueue: 5 });
    const p = pipeline(timeout({ timeout: 50, clock }), hedge({ clock, delay: 10 }), inner);
    const work = byHand();
    const call = track(p.execute(work.fn(clock)), clock);
    await clock.advanceAsync(10);
    expect(inner.stats()).toMatchObject({ inFlight: 1, queueLength: 1 });
    await clock.advanceAsync(40);
    await call.done;
    expect(call).toMatchObject({ ok: false, at: 50 });
    expect(call.error).toBeInstanceOf(TimeoutError);
    expect(inner.stats()).toMatchObject({ inFlight: 1, queueLength: 0 });
    expect(work.starts).toEqual([0]);
    work.answers[0]!.reject(work.signals[0]!.reason);
    await clock.advanceAsync(0);
    expect(inner.stats()).toMatchObject({ inFlight: 0, queueLength: 0 });
  });

  it('a hedge inside a hedge races the attempts of each outer attempt, and the first answer settles them all', async () => {
    const clock = new ManualClock();
    const outer = hedge({ clock, delay: 10 });
    const inner = hedge({ clock, delay: 4 });
    const started: [number, number][] = [];
    const answers: ReturnType<typeof deferred<string>>[] = [];
    const signals: AbortSignal[] = [];
    const call = track(
      pipeline(outer, inner).execute(({ hedge: n, signal }) => {
        started.push([clock.now(), n]);
        signals.push(signal);
        const d = deferred<string>();
        answers.push(d);
        return d.promise;
      }),
      clock,
    );
    await clock.advanceAsync(14);
    // Outer attempt 0: inner attempts at 0 and 4; outer attempt 1 at 10: inner attempts at 10 and 14.
    expect(started).toEqual([
      [0, 0],
      [4, 1],
      [10, 0],
      [14, 1],
    ]);
    answers[1]!.resolve('inner hedge of the first');
    await call.done;
    expect(call).toMatchObject({ ok: true, value: 'inner hedge of the first', at: 14 });
    expect(signals.map((s) => s.aborted)).toEqual([true, false, true, true]);
    for (const [k, a] of answers.entries()) if (k !== 1) a.reject(signals[k]!.reason);
    await clock.advanceAsync(100);
    expect(outer.pending + inner.pending).toBe(0);
    expect(outer.stats()).toEqual({ calls: 1, hedges: 1, won: 0, refused: 0 });
    expect(inner.stats()).toEqual({ calls: 2, hedges: 2, won: 1, refused: 0 });
  });
});

describe('Hedge budget', () => {
  /** A budget that grants `grants` extra attempts in all and logs every call made to it. */
  function loggingBudget(grants: number) {
    const log: string[] = [];
    let left = grants;
    const budget: AttemptBudget = {
      callStarted: () => log.push('callStarted'),
      callEnded: () => log.push('callEnded'),
      attemptSucceeded: () => log.push('attemptSucceeded'),
      attemptFailed: () => log.push('attemptFailed'),
      trySpend: () => {
        log.push(left > 0 ? 'trySpend: granted' : 'trySpend: refused');
        return left-- > 0;
      },
      extraEnded: () => log.push('extraEnded'),
    };
    return { budget, log };
  }

  it('spends one extra attempt per hedge and gives it back when the hedge really ends', async () => {
    const clock = new ManualClock();
    const { budget, log } = loggingBudget(1);
    const h = hedge({ clock, delay: 10, maxHedges: 2, budget });
    const refused: unknown[] = [];
    h.onBudgetRefused((e) => refused.push(e));
    const work = byHand();
    const call = track(pipeline(h).execute(work.fn(clock)));
    await clock.advanceAsync(20);
    expect(work.starts).toEqual([0, 10]);
    expect(refused).toEqual([{ hedge: 2, reason: 'delay' }]);
    work.answers[0]!.reject(new Error('down'));
    await clock.advanceAsync(0);
    work.answers[1]!.resolve('ok');
    await call.done;
    expect(log).toEqual([
      'callStarted',
      'trySpend: granted',
      'trySpend: refused',
      'attemptFailed',
      'trySpend: refused',
      'extraEnded',
      'attemptSucceeded',
      'callEnded',
    ]);
    expect(h.stats()).toEqual({ calls: 1, hedges: 1, won: 1, refused: 2 });
  });

  it('a cancelled loser gives its extra attempt back when it ends, after the call ended', async () => {
    const clock = new ManualClock();
    const { budget, log } = loggingBudget(5);
    const h = hedge({ clock, delay: 10, budget });
    const work = byHand();
    const call = track(pipeline(h).execute(work.fn(clock)));
    await clock.advanceAsync(10);
    work.answers[0]!.resolve('first');
    await call.done;
    expect(log).toEqual(['callStarted', 'trySpend: granted', 'attemptSucceeded', 'callEnded']);
    work.answers[1]!.reject(work.signals[1]!.reason);
    await clock.advanceAsync(0);
    expect(log.at(-1)).toBe('extraEnded');
  });
});

describe('Hedge options', () => {
  it.each<[string, HedgeOptions, string]>([
    ['maxHedges 0', { maxHedges: 0 }, 'maxHedges'],
    ['maxHedges 1.5', { maxHedges: 1.5 }, 'maxHedges'],
    ['a negative delay', { delay: -1 }, 'delay'],
    ['an unknown delay word', { delay: 'soon' as never }, 'delay'],
    ['percentile 1', { delay: { percentile: 1 } }, 'delay.percentile'],
    ['percentile 0', { delay: { percentile: 0 } }, 'delay.percentile'],
    ['no percentile', { delay: { minSamples: 5 } as never }, 'delay.percentile'],
    ['minSamples 0', { delay: { percentile: 0.9, minSamples: 0 } }, 'delay.minSamples'],
    ['a window under 100 ms', { delay: { percentile: 0.9, window: 10 } }, 'delay.window'],
    [
      'an unknown percentile key',
      { delay: { percentile: 0.9, windw: 10 } as never },
      'delay.windw',
    ],
    ['a budget without trySpend', { budget: { callStarted() {} } as never }, 'budget'],
    ['handle not a function', { handle: true as never }, 'handle'],
    ['an unknown option', { delays: 5 } as never, 'delays'],
  ])('refuses %s, naming the option', (_, options, path) => {
    const error = errorOf(OptionsError, () => hedge(options));
    expect(error.message.startsWith(`${path}:`) || error.message.includes(`\`${path}\``)).toBe(
      true,
    );
  });

  it('reconfigure applies to later calls, keeps the name and clock, and changes nothing when invalid', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, name: 'api', delay: 100 });
    expect(() => h.reconfigure({ delay: 50, maxHedges: 11 })).toThrow(OptionsError);
    expect(() => h.reconfigure({ name: 'other' })).toThrow(OptionsError);
    expect(h.maxHedges).toBe(1);
    h.reconfigure({ delay: { percentile: 0.5, minSamples: 1 }, maxHedges: 2 });
    expect(h.name).toBe('api');
    expect(h.maxHedges).toBe(2);
    const p = pipeline(h);
    const first = p.execute(
      () => new Promise<string>((resolve) => clock.setTimer(() => resolve('x'), 30)),
    );
    await clock.advanceAsync(30);
    await first;
    h.reconfigure({ delay: 'on-failure' });
    const work = byHand();
    const call = track(p.execute(work.fn(clock)));
    await clock.advanceAsync(1_000);
    expect(work.starts).toEqual([30]);
    work.answers[0]!.resolve('first');
    await call.done;
    expect(call.value).toBe('first');
  });

  it('has the documented defaults', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock });
    expect(h.maxHedges).toBe(1);
    expect(h.name).toBe('hedge');
    const work = byHand();
    track(pipeline(h).execute(work.fn(clock)));
    await clock.advanceAsync(1_999);
    expect(work.starts.length).toBe(1);
    await clock.advanceAsync(1);
    expect(work.starts.length).toBe(2);
    for (const a of work.answers) a.resolve('x');
  });
});

describe('Hedge in a registry', () => {
  it('is built from config data, shows in snapshots and reports its metric families', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        defaults: { hedge: { delay: { percentile: 0.9, minSamples: 50, window: '10s' } } },
        hedges: { api: { maxHedges: 2, delay: '150ms' }, search: {} },
      },
      { clock },
    );
    const api = registry.get(hedgeKind, 'api');
    expect(api.maxHedges).toBe(2);
    expect(api.o.delay).toEqual({ kind: 'fixed', ms: 150 });
    expect(registry.get(hedgeKind, 'search').o.delay).toEqual({
      kind: 'percentile',
      percentile: 0.9,
      minSamples: 50,
      window: 10_000,
    });
    const work = byHand();
    const call = track(pipeline(api).execute(work.fn(clock)));
    await clock.advanceAsync(150);
    work.answers[1]!.resolve('ok');
    await call.done;
    expect(registry.snapshot().instances).toContainEqual({
      kind: 'hedge',
      name: 'api',
      stats: { calls: 1, hedges: 1, won: 1, refused: 0 },
    });
    const families = collectMetrics(registry);
    const won = families.find((f) => f.name === 'breakwater_hedge_won_total');
    expect(won?.samples).toContainEqual({ labels: { name: 'api', key: '' }, value: 1 });
    registry.dispose();
    work.answers[0]!.resolve('late');
  });

  it('reconfigures from new config data: later calls take the new delay', async () => {
    const clock = new ManualClock();
    const registry = new Registry({ hedges: { api: { delay: 100 } } }, { clock });
    const api = registry.hedge('api');
    expect(registry.hedge('api')).toBe(api);
    registry.reconfigure({ hedges: { api: { delay: '40ms', maxHedges: 3 } } });
    expect(registry.hedge('api')).toBe(api);
    const work = byHand();
    const call = track(pipeline(api).execute(work.fn(clock)));
    await clock.advanceAsync(120);
    expect(work.starts).toEqual([0, 40, 80, 120]);
    work.answers[0]!.resolve('first');
    await call.done;
    registry.dispose();
  });

  it('reports bad config data by path', () => {
    expect(() => new Registry({ hedges: { api: { maxHedges: 11 } } })).toThrow(
      /hedges\.api\.maxHedges/,
    );
    expect(() => new Registry({ hedges: { api: { delay: 'soon' } } })).toThrow(
      /hedges\.api\.delay/,
    );
  });

  it('publishes each hedge on its diagnostics channel', async () => {
    const { subscribe, unsubscribe } = await import('node:diagnostics_channel');
    const messages: unknown[] = [];
    const listener = (m: unknown) => messages.push(m);
    subscribe(diagnosticsChannels.hedge, listener);
    try {
      const clock = new ManualClock();
      const h = hedge({ clock, name: 'api', delay: 5 });
      const work = byHand();
      const call = track(pipeline(h).execute(work.fn(clock)));
      await clock.advanceAsync(5);
      work.answers[0]!.resolve('ok');
      await call.done;
      expect(messages).toEqual([{ name: 'api', hedge: 1, reason: 'delay' }]);
      work.answers[1]!.resolve('late');
    } finally {
      unsubscribe(diagnosticsChannels.hedge, listener);
    }
  });
});
