import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  OptionsError,
  PipelineBuilder,
  pipeline,
  RateLimiter,
  retry,
  Timeout,
  TimeoutError,
  timeout,
} from '../../src/index.js';
import { resolveRedisLimiterOptions } from '../../src/redis/rateLimiterOptions.js';
import { resolveStoreOptions } from '../../src/redis/storeOptions.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred, track, untilAborted } from '../support/async.js';
import { resolved } from '../support/config.js';
import { optionsError } from '../support/errors.js';

const fail = () => Promise.reject(new Error('down'));

describe('duration strings in code options', () => {
  it('a breaker with breakDuration "5s" admits a probe after 5,000 ms of manual time', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      window: { kind: 'consecutive', threshold: 1 },
      breakDuration: '5s',
      clock,
    });
    await pipeline(breaker)
      .execute(fail)
      .catch(() => {});
    expect(breaker.state).toBe('open');
    clock.advance(4_999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });

  it('every duration option of a breaker takes a string', () => {
    const breaker = new CircuitBreaker({
      window: { kind: 'time', duration: '10s', buckets: 10 },
      slowCallDuration: '1.5s',
      breakDuration: '1m',
      breakBackoff: { maxDuration: '10m' },
      halfOpen: { maxWait: '2m' },
    });
    expect(resolved(breaker)).toMatchObject({
      duration: 10_000,
      slowCallDuration: 1_500,
      breakDuration: 60_000,
      backoffMax: 600_000,
      halfOpenMaxWait: 120_000,
    });
    expect(resolved(new CircuitBreaker({ slowCallDuration: 'Infinity' })).slowCallDuration).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('a retry with delay "100ms" waits 100 ms of manual time between attempts, and stops at maxDuration "250ms"', async () => {
    const clock = new ManualClock();
    const starts: number[] = [];
    const policy = retry({
      maxAttempts: 10,
      maxDuration: '250ms',
      backoff: 'constant',
      delay: '100ms',
      maxDelay: '1s',
      jitter: 'none',
      clock,
    });
    const outcome = track(
      pipeline(policy).execute(() => {
        starts.push(clock.now());
        return fail();
      }),
    );
    await clock.runAll();
    await outcome.done;
    expect(outcome.ok).toBe(false);
    expect(starts).toEqual([0, 100, 200]);
    expect(policy.o).toMatchObject({ delay: 100, maxDelay: 1_000, maxDuration: 250 });
  });

  it('timeout("2s") is a timeout of 2,000 ms, reached after 2,000 ms of manual time', async () => {
    expect(timeout('2s').timeout).toBe(2_000);
    expect(new Timeout('1.5s').timeout).toBe(1_500);
    const clock = new ManualClock();
    const p = pipeline(timeout({ timeout: '2s', clock }));
    const call = track(p.execute(untilAborted));
    clock.advance(1_999);
    await Promise.resolve();
    expect(call.settled).toBe(false);
    clock.advance(1);
    await call.done;
    expect(call.error).toBeInstanceOf(TimeoutError);
  });

  it('a timeout is reconfigured and built in a pipeline with a string', () => {
    const policy = timeout('2s');
    policy.reconfigure('3s');
    expect(policy.timeout).toBe(3_000);
    policy.reconfigure({ timeout: '250ms' });
    expect(policy.timeout).toBe(250);
    expect(() => new PipelineBuilder().timeout('1s').build()).not.toThrow();
  });

  it('a timeout refuses Infinity, however written, and says to leave the timeout out', () => {
    for (const value of [Number.POSITIVE_INFINITY, 'Infinity']) {
      const e = optionsError(() => timeout(value as never));
      expect(e.option).toBe('timeout');
      expect(e.message).toContain('for no time limit, leave the timeout out of the pipeline');
      expect(() => timeout({ timeout: value as never })).toThrow(OptionsError);
    }
  });

  it('a bulkhead with queueTimeout "1s" refuses a queued call after 1,000 ms of manual time', async () => {
    const clock = new ManualClock();
    const p = pipeline(new Bulkhead({ maxConcurrent: 1, maxQueue: 1, queueTimeout: '1s', clock }));
    const work = deferred();
    const first = track(p.execute(() => work.promise));
    const queued = track(p.execute(() => 'late'));
    clock.advance(999);
    await Promise.resolve();
    expect(queued.settled).toBe(false);
    clock.advance(1);
    await queued.done;
    expect(queued.error).toBeInstanceOf(BulkheadRejectedError);
    work.resolve('done');
    await first.done;
    expect(resolved(new Bulkhead({ queueTimeout: 'Infinity' })).queueTimeout).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('a rate limiter with period "1s" frees its permit 1,000 ms of manual time later', () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ limit: 1, period: '1s', maxWait: '500ms', clock });
    expect(limiter.tryAcquire()).toBe(0);
    expect(limiter.tryAcquire()).toBe(1_000);
    clock.advance(1_000);
    expect(limiter.tryAcquire()).toBe(0);
    expect(resolved(limiter).maxWait).toBe(500);
  });

  it('the Redis limiter and its store take their durations as strings', () => {
    const adapter = { evalsha: async () => 0, eval: async () => 0, scriptLoad: async () => '' };
    expect(resolveStoreOptions({ client: adapter as never, timeout: '150ms' }).timeout).toBe(150);
    const o = resolveRedisLimiterOptions({
      client: adapter as never,
      limit: 10,
      period: '1s',
      maxWait: '50ms',
      probeInterval: '2s',
    });
    expect(o.probeInterval).toBe(2_000);
    expect(o.rate.intervalUs).toBe(100_000);
    expect(o.rate.maxWait).toBe(50);
  });

  it('a malformed string is refused with the option, the value and the forms', () => {
    const e = optionsError(() => new CircuitBreaker({ halfOpen: { maxWait: '2 min' as never } }));
    expect(e.option).toBe('halfOpen.maxWait');
    expect(e.message).toBe(
      'Expected `halfOpen.maxWait` to be a duration: ms as a number, or a string like "250ms", "30s", "1.5s", "5m", "1h", in [1, 2147483647] ms, got "2 min"',
    );
  });
});
