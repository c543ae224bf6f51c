/**
 * Every policy runs a call by itself (`breaker.execute(fn)`), as the pipeline of that policy
 * alone does.
 */
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  BulkheadRejectedError,
  bulkhead,
  circuitBreaker,
  fallback,
  RateLimitedError,
  rateLimiter,
  retry,
  TimeoutError,
  timeout,
  UsageError,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred, track, untilAborted } from '../support/async.js';

describe('a policy alone', () => {
  it('a circuit breaker executes, counts the outcomes and refuses once open', async () => {
    const breaker = circuitBreaker({ window: { kind: 'consecutive', threshold: 2 } });
    await expect(breaker.execute(() => 'ok')).resolves.toBe('ok');
    for (let i = 0; i < 2; i++) {
      await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow(
        'down',
      );
    }
    expect(breaker.state).toBe('open');
    await expect(breaker.execute(() => 'never called')).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(breaker.stats()).toMatchObject({ successes: 1, failures: 2, rejections: 1 });
  });

  it('a circuit breaker runs a synchronous call synchronously', () => {
    const breaker = circuitBreaker();
    expect(breaker.executeSync(() => 42)).toBe(42);
    expect(breaker.stats().successes).toBe(1);
  });

  it('a bulkhead hands back its refusal from tryExecute without throwing', async () => {
    const pool = bulkhead(1);
    const held = deferred<string>();
    const first = pool.execute(() => held.promise);
    const refused = await pool.tryExecute(() => 'second');
    expect(refused.ok === false && refused.error).toBeInstanceOf(BulkheadRejectedError);
    held.resolve('first');
    await expect(first).resolves.toBe('first');
    expect(pool.inFlight).toBe(0);
  });

  it('a rate limiter refuses the calls beyond its burst', () => {
    const limiter = rateLimiter({ limit: 2, period: 1_000, clock: new ManualClock() });
    expect(limiter.executeSync(() => 1)).toBe(1);
    expect(limiter.executeSync(() => 2)).toBe(2);
    expect(() => limiter.executeSync(() => 3)).toThrow(RateLimitedError);
  });

  it('a retry runs the call again after its delay', async () => {
    const clock = new ManualClock();
    const r = retry({ maxAttempts: 3, delay: 100, backoff: 'constant', jitter: 'none', clock });
    let attempts = 0;
    const call = track(
      r.execute(() => (++attempts < 3 ? Promise.reject(new Error('flaky')) : 'third time')),
    );
    await clock.advanceAsync(100);
    expect(attempts).toBe(2);
    await clock.advanceAsync(100);
    await call.done;
    expect(call.value).toBe('third time');
    expect(r.stats().retries).toBe(2);
  });

  it('a timeout rejects at its deadline and aborts the signal it gave', async () => {
    const clock = new ManualClock();
    const t = timeout({ timeout: 500, clock });
    const call = track(t.execute(untilAborted));
    await clock.advanceAsync(499);
    expect(call.settled).toBe(false);
    await clock.advanceAsync(1);
    await call.done;
    expect(call.error).toBeInstanceOf(TimeoutError);
  });

  it('a fallback replaces the failure', async () => {
    const f = fallback({ value: 'cached' });
    await expect(f.execute(() => Promise.reject(new Error('down')))).resolves.toBe('cached');
  });

  it('a policy that may wait refuses executeSync, as its pipeline does', () => {
    expect(() => bulkhead({ maxConcurrent: 1, maxQueue: 1 }).executeSync(() => 1)).toThrow(
      UsageError,
    );
  });

  it('one policy alone and in a pipeline shares its state', async () => {
    const breaker = circuitBreaker({ window: { kind: 'consecutive', threshold: 1 } });
    await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow();
    // The same breaker, opened by its own call, refuses in any pipeline.
    await expect(breaker.execute(() => 'x')).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(breaker.stats().rejections).toBe(1);
  });
});
