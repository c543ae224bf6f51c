import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Bulkhead,
  CircuitBreaker,
  diagnosticsChannels,
  pipeline,
  RateLimiter,
  Retry,
  Timeout,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';

const subscriptions: [string, (message: unknown) => void][] = [];

function listen(name: string): unknown[] {
  const seen: unknown[] = [];
  const fn = (message: unknown) => seen.push(message);
  subscribe(name, fn);
  subscriptions.push([name, fn]);
  return seen;
}

afterEach(() => {
  for (const [name, fn] of subscriptions.splice(0)) unsubscribe(name, fn);
});

describe('diagnostics channels', () => {
  it('publishes breaker state changes and refusals with the breaker name', async () => {
    const changes = listen(diagnosticsChannels.stateChange);
    const rejected = listen(diagnosticsChannels.rejected);
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      name: 'payments',
      clock,
      window: { kind: 'consecutive', threshold: 1 },
    });
    const p = pipeline(breaker);
    await p.tryExecute(() => {
      throw new Error('down');
    });
    const refusal = await p.tryExecute(() => 1);
    expect(changes).toEqual([
      expect.objectContaining({
        name: 'payments',
        from: 'closed',
        to: 'open',
        reason: 'consecutive-failures',
        generation: 1,
      }),
    ]);
    expect(rejected).toEqual([
      {
        kind: 'circuitBreaker',
        name: 'payments',
        reason: 'open',
        error: refusal.ok ? undefined : refusal.error,
      },
    ]);
  });

  it('publishes bulkhead and rate limiter refusals, retries and timeouts', async () => {
    const rejected = listen(diagnosticsChannels.rejected);
    const retries = listen(diagnosticsChannels.retry);
    const timeouts = listen(diagnosticsChannels.timeout);
    const clock = new ManualClock();
    const bulkhead = new Bulkhead({ name: 'pool', clock, maxConcurrent: 1 });
    let release!: () => void;
    const holder = pipeline(bulkhead).execute(() => new Promise<void>((r) => (release = r)));
    await pipeline(bulkhead).tryExecute(() => 1);
    release();
    await holder;
    const limiter = new RateLimiter({ name: 'api', clock, limit: 1, period: 1_000 });
    limiter.tryAcquire();
    limiter.tryAcquire();
    expect(rejected).toMatchObject([
      { kind: 'bulkhead', name: 'pool', reason: 'full' },
      { kind: 'rateLimiter', name: 'api', reason: 'rate-limited' },
    ]);

    const failure = new Error('flaky');
    const retry = new Retry({
      name: 'r',
      clock,
      maxAttempts: 2,
      delay: 5,
      backoff: 'constant',
      jitter: 'none',
    });
    const call = pipeline(retry).tryExecute(() => {
      throw failure;
    });
    await flushMicrotasks();
    clock.advance(5);
    await call;
    expect(retries).toEqual([{ name: 'r', attempt: 1, delay: 5, error: failure }]);

    const timeout = new Timeout({ name: 't', clock, timeout: 20, strategy: 'aggressive' });
    const slow = pipeline(timeout).tryExecute(() => new Promise(() => {}));
    clock.advance(20);
    await slow;
    expect(timeouts).toEqual([{ name: 't', timeout: 20 }]);
  });

  it('publishes nothing once its subscriber is gone', async () => {
    const seen: unknown[] = [];
    const fn = (m: unknown) => seen.push(m);
    subscribe(diagnosticsChannels.stateChange, fn);
    const breaker = new CircuitBreaker({ clock: new ManualClock() });
    breaker.trip();
    unsubscribe(diagnosticsChannels.stateChange, fn);
    breaker.reset();
    expect(seen).toHaveLength(1);
  });
});
