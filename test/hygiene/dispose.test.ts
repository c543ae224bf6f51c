import { describe, expect, it } from 'vitest';
import { Bulkhead, CircuitBreaker, pipeline, Retry, Timeout, UsageError } from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { deferred, track } from '../support/async.js';

describe('pipeline.dispose() leaves no timer behind', () => {
  it('calls waiting in a retry delay reject with UsageError and their timers are cancelled', async () => {
    const clock = new ManualClock();
    const p = pipeline(new Retry({ clock, delay: 1_000, jitter: 'none', maxAttempts: 5 }));
    const waiting = [1, 2, 3].map(() => track(p.execute(() => Promise.reject(new Error('x')))));
    await flushMicrotasks();
    expect(clock.pendingTimers).toBe(3);
    p.dispose();
    expect(clock.pendingTimers).toBe(0);
    await flushMicrotasks();
    for (const w of waiting) {
      expect(w.ok).toBe(false);
      expect(w.error).toBeInstanceOf(UsageError);
    }
    expect(clock.pendingTimers).toBe(0);
  });

  it('calls in a bulkhead queue reject with UsageError, the queue-timeout timer is cancelled, the call in flight finishes', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 3, queueTimeout: 500, clock });
    const p = pipeline(pool);
    const work = deferred<string>();
    const running = track(p.execute(() => work.promise));
    const queued = [1, 2].map(() => track(p.execute(() => 'never')));
    expect(clock.pendingTimers).toBe(1);
    p.dispose();
    expect(clock.pendingTimers).toBe(0);
    await flushMicrotasks();
    for (const q of queued) expect(q.error).toBeInstanceOf(UsageError);
    expect(pool.queueLength).toBe(0);
    work.resolve('done');
    await flushMicrotasks();
    expect(running).toMatchObject({ ok: true, value: 'done' });
    expect(pool.inFlight).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('timeout deadlines are dropped: calls in flight finish normally and never time out', async () => {
    const clock = new ManualClock();
    const policy = new Timeout({ timeout: 100, clock, strategy: 'aggressive' });
    const p = pipeline(policy);
    const work = deferred<string>();
    const running = track(p.execute(() => work.promise));
    expect(clock.pendingTimers).toBe(1);
    p.dispose();
    expect(clock.pendingTimers).toBe(0);
    expect(policy.pending).toBe(0);
    clock.advance(1_000);
    await flushMicrotasks();
    expect(running.settled).toBe(false);
    work.resolve('late but fine');
    await flushMicrotasks();
    expect(running).toMatchObject({ ok: true, value: 'late but fine' });
  });

  // The UsageError a disposed bulkhead gives its queued calls must not be retried by the retry
  // outside it, or a new delay timer would be armed after dispose().
  it('retry + breaker + timeout + bulkhead with calls in a retry delay and in the queue: none left, even after the refused calls unwind', async () => {
    const clock = new ManualClock();
    const pool = new Bulkhead({ maxConcurrent: 1, maxQueue: 2, queueTimeout: 500, clock });
    const p = pipeline(
      new Retry({ clock, delay: 100, jitter: 'none', backoff: 'constant', maxAttempts: 3 }),
      new CircuitBreaker({ clock }),
      new Timeout({ timeout: 1_000, clock }),
      pool,
    );
    // One call fails at once and waits out its retry delay...
    const sleeping = track(p.execute(() => Promise.reject(new Error('flaky'))));
    await flushMicrotasks();
    // ...one holds the only permit, and one waits in the queue.
    const work = deferred<string>();
    const running = track(p.execute(() => work.promise));
    const queued = track(p.execute(() => 'never'));
    expect(pool.inFlight).toBe(1);
    expect(pool.queueLength).toBe(1);
    expect(clock.pendingTimers).toBeGreaterThanOrEqual(3);

    p.dispose();
    expect(clock.pendingTimers).toBe(0);
    await flushMicrotasks();
    expect(clock.pendingTimers).toBe(0);
    expect(sleeping.error).toBeInstanceOf(UsageError);
    expect(queued.error).toBeInstanceOf(UsageError);

    work.resolve('done');
    await flushMicrotasks();
    expect(running).toMatchObject({ ok: true, value: 'done' });
    expect(pool.inFlight).toBe(0);
    expect(pool.queueLength).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });
});
