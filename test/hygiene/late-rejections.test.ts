import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  pipeline,
  Retry,
  Timeout,
  TimeoutError,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { deferred, macrotask } from '../support/async.js';
import { recordUnhandledRejections } from '../support/rejections.js';

const unhandled = recordUnhandledRejections();

/** Two macrotask turns: Node reports unhandled rejections after the microtask queue drains. */
async function settleProcess(): Promise<void> {
  for (let i = 0; i < 2; i++) await macrotask();
}

describe('aggressive timeout: abandoned work that rejects late is observed', () => {
  it('no unhandledRejection when the work rejects after the call timed out', async () => {
    unhandled.length = 0;
    const clock = new ManualClock();
    const p = pipeline(new Timeout({ timeout: 50, strategy: 'aggressive', clock }));
    const work = deferred();
    const call = p.execute(() => work.promise);
    const outcome = call.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    clock.advance(50);
    expect(await outcome).toBeInstanceOf(TimeoutError);
    work.reject(new Error('late failure'));
    await settleProcess();
    expect(unhandled).toEqual([]);
  });

  it('no unhandledRejection for every abandoned attempt of a retried call, with inner permits returned', async () => {
    unhandled.length = 0;
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 3, clock });
    const inner = new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 10 } });
    const p = pipeline(
      new Retry({ clock, delay: 5, jitter: 'none', backoff: 'constant', maxAttempts: 3 }),
      new Timeout({ timeout: 50, strategy: 'aggressive', clock }),
      inner,
      pool,
    );
    const works = [deferred(), deferred(), deferred()];
    let n = 0;
    const outcome = p
      .execute(() => works[n++]!.promise)
      .then(
        () => 'resolved',
        (error: unknown) => error,
      );
    await clock.runAll();
    expect(await outcome).toBeInstanceOf(TimeoutError);
    expect(pool.inFlight).toBe(3);
    for (const w of works) w.reject(new Error('late failure'));
    await settleProcess();
    expect(unhandled).toEqual([]);
    expect(pool.inFlight).toBe(0);
    // The inner breaker hears how the abandoned work really ended.
    expect(inner.stats().failures).toBe(3);
  });

  it('no unhandledRejection when the caller aborted the call and the work rejects later', async () => {
    unhandled.length = 0;
    const clock = new ManualClock();
    const p = pipeline(new Timeout({ timeout: 50, strategy: 'aggressive', clock }));
    const work = deferred();
    const controller = new AbortController();
    const outcome = p
      .execute(() => work.promise, { signal: controller.signal })
      .then(
        () => 'resolved',
        (error: unknown) => error,
      );
    controller.abort(new Error('caller'));
    expect(await outcome).toMatchObject({ message: 'caller' });
    work.reject(new Error('late failure'));
    await settleProcess();
    expect(unhandled).toEqual([]);
  });

  it('no unhandledRejection with tryExecute and a synchronous-then-late mix of attempts', async () => {
    unhandled.length = 0;
    const clock = new ManualClock();
    const p = pipeline(
      new Retry({ clock, delay: 1, jitter: 'none', backoff: 'constant', maxAttempts: 4 }),
      new Timeout({ timeout: 10, strategy: 'aggressive', clock }),
    );
    const late = deferred();
    const result = p.tryExecute(({ attempt }) => {
      if (attempt === 1) throw new Error('sync failure');
      if (attempt === 2) return late.promise;
      return Promise.resolve(`attempt ${attempt}`);
    });
    await clock.runAll();
    await flushMicrotasks();
    expect(await result).toEqual({ ok: true, value: 'attempt 3' });
    late.reject(new Error('late failure'));
    await settleProcess();
    expect(unhandled).toEqual([]);
  });
});
