import { describe, expect, it } from 'vitest';
import { serverPushback } from '../../../src/http/index.js';
import {
  type AttemptBudget,
  hedge,
  hedgeDefaults,
  OptionsError,
  setListenerErrorHandler,
  timeout,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { track } from '../../support/async.js';
import { errorOf } from '../../support/errors.js';
import { byHand, HEDGE_MODES, hedged, recordHedges } from '../../support/hedge.js';

/** An error carrying response headers, as `serverPushback` reads them. */
const pushedBack = (headers: Record<string, string>) =>
  Object.assign(new Error('503'), { headers });

describe.each(HEDGE_MODES)('Hedge server pushback, %s', (mode) => {
  it('a handled failure with a pushback starts the next hedge after it, not at once', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 'on-failure', retryAfter: serverPushback });
    const { events, listen } = recordHedges(h);
    listen(clock);
    const work = byHand();
    const call = track(hedged(mode, h).execute(work.fn(clock)));
    await clock.advanceAsync(5);
    work.answers[0]!.reject(pushedBack({ 'retry-after': '2' }));
    await clock.advanceAsync(1_999);
    expect(work.starts).toEqual([0]);
    await clock.advanceAsync(1);
    expect(work.starts).toEqual([0, 2_005]);
    expect(events).toEqual([{ hedge: 1, reason: 'pushback', at: 2_005 }]);
    work.answers[1]!.resolve('ok');
    await call.done;
    expect(call.value).toBe('ok');
    expect(h.pending).toBe(0);
  });

  it('replaces the pending delay of the next hedge, shorter or longer', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 100, maxHedges: 2, retryAfter: serverPushback });
    const work = byHand();
    const call = track(hedged(mode, h).execute(work.fn(clock)));
    await clock.advanceAsync(10);
    work.answers[0]!.reject(pushedBack({ 'grpc-retry-pushback-ms': '500' }));
    await clock.advanceAsync(499);
    expect(work.starts).toEqual([0]);
    await clock.advanceAsync(1);
    expect(work.starts).toEqual([0, 510]);
    // The hedge after it comes a delay after it started, as usual.
    await clock.advanceAsync(100);
    expect(work.starts).toEqual([0, 510, 610]);
    work.answers[2]!.resolve('third');
    await call.done;
    expect(call.value).toBe('third');
    work.answers[1]!.reject(work.signals[1]!.reason);
  });

  it('a pushback that says not to retry starts no more hedges: the call waits for the attempts in flight', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 10, maxHedges: 3, retryAfter: serverPushback });
    const work = byHand();
    const call = track(hedged(mode, h).execute(work.fn(clock)));
    await clock.advanceAsync(10);
    work.answers[1]!.reject(pushedBack({ 'grpc-retry-pushback-ms': '-1' }));
    await clock.advanceAsync(1_000);
    expect(work.starts).toEqual([0, 10]);
    expect(call.settled).toBe(false);
    work.answers[0]!.resolve('first');
    await call.done;
    expect(call.value).toBe('first');
  });

  it('a pushback that says not to retry, with no attempt in flight, fails the call with that failure at once', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 'on-failure', retryAfter: serverPushback });
    const work = byHand();
    const call = track(hedged(mode, h).execute(work.fn(clock)), clock);
    const stop = pushedBack({ 'grpc-retry-pushback-ms': '-1' });
    work.answers[0]!.reject(stop);
    await call.done;
    expect(call.error).toBe(stop);
    expect(call.at).toBe(0);
    expect(work.starts).toEqual([0]);
  });

  it('a pushback above maxPushback, or past the call’s deadline, starts no more hedges', async () => {
    const clock = new ManualClock();
    const h = hedge({
      clock,
      delay: 'on-failure',
      retryAfter: serverPushback,
      maxPushback: 1_000,
    });
    const work = byHand();
    const tooLong = pushedBack({ 'retry-after': '2' });
    const call = track(hedged(mode, h).execute(work.fn(clock)), clock);
    work.answers[0]!.reject(tooLong);
    await call.done;
    expect(call.error).toBe(tooLong);

    const past = pushedBack({ 'retry-after': '1' });
    const work2 = byHand();
    const call2 = track(hedged(mode, h).execute(work2.fn(clock), { timeout: 800 }), clock);
    work2.answers[0]!.reject(past);
    await call2.done;
    expect(call2.error).toBe(past);
    expect(work2.starts).toEqual([clock.now()]);
  });

  it('an outer timeout bounds the pushback as a call’s own deadline does', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 'on-failure', retryAfter: serverPushback });
    const work = byHand();
    const past = pushedBack({ 'retry-after': '1' });
    const call = track(
      hedged(mode, timeout({ clock, timeout: 900 }), h).execute(work.fn(clock)),
      clock,
    );
    await clock.advanceAsync(50);
    work.answers[0]!.reject(past);
    await call.done;
    expect(call.error).toBe(past);
    expect(call.at).toBe(50);
  });

  it('junk, negative or zero pushback starts the next hedge at once, as without one', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 'on-failure', maxHedges: 3, retryAfter: serverPushback });
    const { events, listen } = recordHedges(h);
    listen(clock);
    const work = byHand();
    const call = track(hedged(mode, h).execute(work.fn(clock)));
    work.answers[0]!.reject(pushedBack({ 'retry-after': 'soon' }));
    await clock.advanceAsync(0);
    work.answers[1]!.reject(pushedBack({ 'retry-after': '0' }));
    await clock.advanceAsync(0);
    work.answers[2]!.reject(new Error('no headers'));
    await clock.advanceAsync(0);
    expect(work.starts).toEqual([0, 0, 0, 0]);
    expect(events.map((e) => e.reason)).toEqual(['failure', 'failure', 'failure']);
    work.answers[3]!.resolve('ok');
    await call.done;
    expect(call.value).toBe('ok');
  });

  it('when the budget refuses the hedge a pushback waited for, the call ends with the failure that asked for the wait', async () => {
    const clock = new ManualClock();
    const budget: AttemptBudget = {
      callStarted() {},
      callEnded() {},
      attemptSucceeded() {},
      attemptFailed() {},
      trySpend: () => false,
      extraEnded() {},
    };
    const h = hedge({ clock, delay: 'on-failure', retryAfter: serverPushback, budget });
    const work = byHand();
    const failure = pushedBack({ 'retry-after': '1' });
    const call = track(hedged(mode, h).execute(work.fn(clock)), clock);
    work.answers[0]!.reject(failure);
    await clock.advanceAsync(999);
    expect(call.settled).toBe(false);
    await clock.advanceAsync(1);
    await call.done;
    expect(call.error).toBe(failure);
    expect(call.at).toBe(1_000);
    expect(h.stats().refused).toBe(1);
  });

  it('the caller’s abort during a pushback wait rejects with its reason at once and drops the timer', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 'on-failure', retryAfter: serverPushback });
    const work = byHand();
    const controller = new AbortController();
    const call = track(
      hedged(mode, h).execute(work.fn(clock), { signal: controller.signal }),
      clock,
    );
    work.answers[0]!.reject(pushedBack({ 'retry-after': '3' }));
    await clock.advanceAsync(100);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await call.done;
    expect(call.error).toBe(reason);
    expect(call.at).toBe(100);
    await clock.advanceAsync(5_000);
    expect(work.starts).toEqual([0]);
    expect(h.pending).toBe(0);
  });

  it('a retryAfter that throws is reported and counts as no pushback', async () => {
    const clock = new ManualClock();
    const h = hedge({
      clock,
      delay: 'on-failure',
      retryAfter: () => {
        throw new Error('bad parser');
      },
    });
    const work = byHand();
    const reported: unknown[] = [];
    setListenerErrorHandler((e) => reported.push(e));
    try {
      const call = track(hedged(mode, h).execute(work.fn(clock)));
      work.answers[0]!.reject(new Error('503'));
      await clock.advanceAsync(0);
      expect(work.starts).toEqual([0, 0]);
      work.answers[1]!.resolve('ok');
      await call.done;
      expect(call.value).toBe('ok');
      expect(reported).toEqual([new Error('bad parser')]);
    } finally {
      setListenerErrorHandler((e) => console.error('breakwater: an event listener threw', e));
    }
  });
});

describe('Hedge pushback options', () => {
  it('defaults maxPushback to 30 s, as a retry’s maxDelay', () => {
    expect(hedgeDefaults.maxPushback).toBe(30_000);
  });

  it.each([
    ['retryAfter not a function', { retryAfter: 5 as never }, 'retryAfter'],
    ['a negative maxPushback', { maxPushback: -1 }, 'maxPushback'],
    ['a maxPushback that is not a duration', { maxPushback: 'soon' as never }, 'maxPushback'],
  ])('refuses %s, naming the option', (_, options, path) => {
    const error = errorOf(OptionsError, () => hedge(options));
    expect(error.option).toBe(path);
    expect(error.value).toBe((options as Record<string, unknown>)[path]);
  });

  it('takes maxPushback as a duration string', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 'on-failure', retryAfter: serverPushback, maxPushback: '2s' });
    const work = byHand();
    const call = track(hedged('alone', h).execute(work.fn(clock)));
    work.answers[0]!.reject(pushedBack({ 'retry-after': '2' }));
    await clock.advanceAsync(2_000);
    expect(work.starts).toEqual([0, 2_000]);
    work.answers[1]!.resolve('ok');
    await call.done;
  });
});
