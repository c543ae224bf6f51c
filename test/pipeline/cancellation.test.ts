import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  pipeline,
  retry,
  TimeoutError,
  timeout,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { track, untilAborted } from '../support/async.js';

const consecutive = (clock: ManualClock, threshold = 1) =>
  new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold } });

describe('caller abort while waiting', () => {
  it('in a retry delay: rejects at once with the reason, cancels the delay, calls fn no more', async () => {
    const clock = new ManualClock();
    const breaker = consecutive(clock, 5);
    const p = pipeline(
      breaker,
      retry({ clock, delay: 1_000, backoff: 'constant', jitter: 'none', maxAttempts: 5 }),
    );
    const controller = new AbortController();
    let calls = 0;
    const r = track(
      p.execute(() => Promise.reject(new Error(`fail ${++calls}`)), {
        signal: controller.signal,
      }),
    );
    await flushMicrotasks();
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('caller gone');
    controller.abort(reason);
    await flushMicrotasks();
    expect(r).toMatchObject({ ok: false, error: reason });
    expect(calls).toBe(1);
    expect(clock.pendingTimers).toBe(0);
    // The breaker outside saw a cancellation, not a failure of the dependency.
    expect(breaker.stats()).toMatchObject({ failures: 0, ignored: 1, state: 'closed' });
  });

  it('in a bulkhead queue: rejects with the reason, leaves the queue, and the next queued call gets the slot', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 2, clock });
    const p = pipeline(pool);
    let release!: () => void;
    const holder = track(p.execute(() => new Promise<string>((res) => (release = () => res('a')))));
    const controller = new AbortController();
    const leaving = track(p.execute(() => 'b', { signal: controller.signal }));
    const staying = track(p.execute(() => 'c'));
    expect(pool.queueLength).toBe(2);
    controller.abort(new Error('leave'));
    await flushMicrotasks();
    expect(leaving).toMatchObject({ ok: false, error: { message: 'leave' } });
    expect(pool.queueLength).toBe(1);
    release();
    await flushMicrotasks();
    expect(holder).toMatchObject({ ok: true, value: 'a' });
    expect(staying).toMatchObject({ ok: true, value: 'c' });
    expect(pool.inFlight).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('caller abort while the function runs', () => {
  it('cooperative: the function is signalled with the reason; the call ends as the function does', async () => {
    const clock = new ManualClock();
    const breaker = consecutive(clock);
    const p = pipeline(breaker, timeout({ timeout: 1_000, clock }));
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const r = track(
      p.execute(
        (ctx) => {
          seen = ctx.signal;
          return untilAborted(ctx);
        },
        { signal: controller.signal },
      ),
    );
    const reason = new Error('stop');
    controller.abort(reason);
    await flushMicrotasks();
    expect(seen!.reason).toBe(reason);
    expect(r).toMatchObject({ ok: false, error: reason });
    // A rejection with the caller's own reason is the caller's doing: not counted.
    expect(breaker.stats()).toMatchObject({ failures: 0, ignored: 1, state: 'closed' });
    // The deadline no longer applies to a cancelled call.
    clock.advance(1_000);
    expect(r.error).toBe(reason);
  });

  it('aggressive: rejects at once with the reason while inner permits stay held until the work ends', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(timeout({ timeout: 1_000, strategy: 'aggressive', clock }), pool);
    const controller = new AbortController();
    let finish!: () => void;
    const r = track(
      p.execute(() => new Promise<void>((res) => (finish = res)), { signal: controller.signal }),
    );
    controller.abort(new Error('stop'));
    await flushMicrotasks();
    expect(r).toMatchObject({ ok: false, error: { message: 'stop' } });
    expect(pool.inFlight).toBe(1);
    finish();
    await flushMicrotasks();
    expect(pool.inFlight).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  // The late outcome of an attempt abandoned because the caller aborted is the caller's doing,
  // not the dependency's.
  it('aggressive: a breaker outside does not count the abandoned work rejecting with the caller reason', async () => {
    const clock = new ManualClock();
    const breaker = consecutive(clock);
    const p = pipeline(breaker, timeout({ timeout: 1_000, strategy: 'aggressive', clock }));
    const controller = new AbortController();
    const r = track(p.execute(untilAborted, { signal: controller.signal }));
    controller.abort(new Error('stop'));
    await flushMicrotasks();
    expect(r).toMatchObject({ ok: false, error: { message: 'stop' } });
    expect(breaker.stats()).toMatchObject({ failures: 0, state: 'closed' });
  });

  // A pipeline of gates only does not listen to the caller's signal; it still has to tell that
  // a rejection with the signal's reason is the caller's doing.
  it('gates only: a breaker does not count a rejection with the aborted caller signal reason', async () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    const p = pipeline(breaker);
    const controller = new AbortController();
    const r = track(p.execute(untilAborted, { signal: controller.signal }));
    controller.abort(new Error('stop'));
    await flushMicrotasks();
    expect(r).toMatchObject({ ok: false, error: { message: 'stop' } });
    expect(breaker.stats()).toMatchObject({ failures: 0, state: 'closed' });
  });
});

describe('cancellation that lands between the end of a wait and the next attempt', () => {
  // When a wait ends (delay timer fired, queue slot granted) the next attempt starts on a
  // later continuation; a cancellation in between must still stop it.
  it('a caller abort right after the retry delay fired: fn is not called again', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      retry({ clock, delay: 10, backoff: 'constant', jitter: 'none', maxAttempts: 5 }),
    );
    const controller = new AbortController();
    const signals: boolean[] = [];
    const r = track(
      p.execute(
        ({ signal }) => {
          signals.push(signal.aborted);
          return Promise.reject(new Error(`fail ${signals.length}`));
        },
        { signal: controller.signal },
      ),
    );
    await flushMicrotasks();
    clock.advance(10);
    const reason = new Error('stop');
    controller.abort(reason);
    await flushMicrotasks();
    expect(signals).toEqual([false]);
    expect(r).toMatchObject({ ok: false, error: reason });
  });

  it('an aggressive deadline passing right after the retry delay fired still ends the call', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      timeout({ timeout: 100, strategy: 'aggressive', clock }),
      retry({ clock, delay: 99, backoff: 'constant', jitter: 'none', maxAttempts: 5 }),
    );
    let calls = 0;
    const r = track(
      p.execute(() => {
        calls++;
        // The first attempt fails at once; the second never ends.
        return calls === 1 ? Promise.reject(new Error('first')) : new Promise(() => {});
      }),
    );
    await flushMicrotasks();
    // One synchronous advance: the delay ends at 99 and the deadline passes at 100 before the
    // second attempt's continuation runs.
    clock.advance(100);
    await clock.runAll();
    await flushMicrotasks();
    expect(r.ok).toBe(false);
    expect(r.error).toBeInstanceOf(TimeoutError);
    expect(calls).toBe(1);
  });
});
