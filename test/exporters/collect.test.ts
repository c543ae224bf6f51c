import { describe, expect, it } from 'vitest';
import {
  collectMetrics,
  type HistogramFamily,
  type MetricFamily,
  type MetricLabels,
  OptionsError,
  pipeline,
  Registry,
  Retry,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';

function value(families: MetricFamily[], name: string, labels: MetricLabels): number | undefined {
  const f = families.find((x) => x.name === name);
  if (f === undefined || f.type === 'histogram') return undefined;
  const s = f.samples.find((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}

const fail = () => {
  throw new Error('down');
};

describe('collectMetrics', () => {
  it('reports every named instance with its counters and gauges', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        circuitBreakers: { pay: { window: { kind: 'consecutive', threshold: 2 } } },
        bulkheads: { pool: { maxConcurrent: 3 } },
        rateLimiters: { api: { limit: 1, period: '1s' } },
        retries: { r: { maxAttempts: 2, delay: 1, jitter: 'none' } },
        timeouts: { t: { timeout: 100 } },
      },
      { clock },
    );
    const breaker = registry.circuitBreaker('pay');
    const p = pipeline(breaker);
    p.executeSync(() => 1);
    for (let i = 0; i < 2; i++) await p.tryExecute(fail);
    await p.tryExecute(() => 1);
    await pipeline(registry.bulkhead('pool')).execute(() => 1);
    const limiter = registry.rateLimiter('api');
    limiter.tryAcquire();
    limiter.tryAcquire();
    const retried = pipeline(registry.retry('r')).tryExecute(fail);
    await flushMicrotasks();
    clock.advance(1);
    await retried;
    registry.timeout('t');

    const m = collectMetrics(registry);
    const named = { name: 'pay', key: '' };
    expect(value(m, 'breakwater_circuit_breaker_state', { ...named, state: 'open' })).toBe(1);
    expect(value(m, 'breakwater_circuit_breaker_state', { ...named, state: 'closed' })).toBe(0);
    expect(
      value(m, 'breakwater_circuit_breaker_calls_total', { ...named, outcome: 'success' }),
    ).toBe(1);
    expect(
      value(m, 'breakwater_circuit_breaker_calls_total', { ...named, outcome: 'failure' }),
    ).toBe(2);
    expect(
      value(m, 'breakwater_circuit_breaker_rejections_total', { ...named, reason: 'open' }),
    ).toBe(1);
    expect(value(m, 'breakwater_circuit_breaker_transitions_total', { ...named, to: 'open' })).toBe(
      1,
    );
    const pool = { name: 'pool', key: '' };
    expect(value(m, 'breakwater_bulkhead_max_concurrent', pool)).toBe(3);
    expect(value(m, 'breakwater_bulkhead_admitted_total', pool)).toBe(1);
    expect(value(m, 'breakwater_bulkhead_in_flight', pool)).toBe(0);
    const api = { name: 'api', key: '' };
    expect(value(m, 'breakwater_rate_limiter_permits_total', { ...api, result: 'admitted' })).toBe(
      1,
    );
    expect(value(m, 'breakwater_rate_limiter_permits_total', { ...api, result: 'rejected' })).toBe(
      1,
    );
    expect(value(m, 'breakwater_retry_retries_total', { name: 'r', key: '' })).toBe(1);
    expect(value(m, 'breakwater_retry_gave_up_total', { name: 'r', key: '' })).toBe(1);
    expect(value(m, 'breakwater_timeout_timeouts_total', { name: 't', key: '' })).toBe(0);
    for (const f of m) {
      expect(f.name).toMatch(/^breakwater_[a-z_]+$/);
      if (f.type === 'counter') expect(f.name).toMatch(/_total$/);
    }
    expect(m.find((f) => f.type === 'histogram')).toBeUndefined();
  });

  it('reports duration histograms in seconds at the requested bounds for instances keeping latency', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { defaults: { circuitBreaker: { metrics: { latency: true } } } },
      { clock },
    );
    const p = pipeline(registry.circuitBreaker('db'));
    for (const ms of [1, 4, 20, 300]) {
      p.executeSync(() => clock.advance(ms));
    }
    const k = pipeline(registry.keyedCircuitBreaker('hosts', 'x'));
    k.executeSync(() => clock.advance(2));
    pipeline(registry.keyedCircuitBreaker('hosts', 'y')).executeSync(() => clock.advance(3));
    // One histogram per keyed name: a key's own stats leave it out rather than show the name's.
    expect(registry.keyedCircuitBreaker('hosts', 'x').stats().latency).toBeUndefined();
    expect(registry.circuitBreaker('db').stats().latency).toMatchObject({ count: 4, max: 300 });
    const m = collectMetrics(registry, { durationBuckets: [0.001, 0.005, 0.1, 1] });
    const h = m.find((f) => f.name === 'breakwater_call_duration_seconds') as HistogramFamily;
    expect(h.type).toBe('histogram');
    expect(h.bounds).toEqual([0.001, 0.005, 0.1, 1]);
    expect(h.samples).toEqual([
      {
        labels: { kind: 'circuitBreaker', name: 'db', key: '' },
        buckets: [1, 2, 3, 4],
        count: 4,
        sum: 0.325,
      },
      {
        labels: { kind: 'circuitBreaker', name: 'hosts', key: '_all' },
        buckets: [0, 2, 2, 2],
        count: 2,
        sum: 0.005,
      },
    ]);
  });

  it('reports at most maxKeysPerName keys one by one, open ones first, and sums the rest into _other', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { circuitBreakers: { hosts: { window: { kind: 'consecutive', threshold: 1 } } } },
      { clock },
    );
    for (let i = 0; i < 10; i++)
      pipeline(registry.keyedCircuitBreaker('hosts', `h${i}`)).executeSync(() => 1);
    registry.keyedCircuitBreaker('hosts', 'h0').trip();
    const m = collectMetrics(registry, { maxKeysPerName: 3 });
    const calls = m.find((f) => f.name === 'breakwater_circuit_breaker_calls_total')!;
    const keys = new Set(calls.samples.map((s) => s.labels.key));
    // h0 (open) first, then the two most recently used, then the rest summed.
    expect([...keys]).toEqual(['h0', 'h9', 'h8', '_other']);
    const other = { name: 'hosts', key: '_other' };
    expect(
      value(m, 'breakwater_circuit_breaker_calls_total', { ...other, outcome: 'success' }),
    ).toBe(7);
    expect(value(m, 'breakwater_circuit_breaker_state', { ...other, state: 'closed' })).toBe(7);
    expect(
      value(m, 'breakwater_circuit_breaker_state', { name: 'hosts', key: 'h0', state: 'open' }),
    ).toBe(1);
  });

  it('keeps a keyed name total from going down when keys are evicted', () => {
    const clock = new ManualClock();
    const registry = new Registry({ keys: { maxKeys: 5 } }, { clock });
    const total = () => {
      const f = collectMetrics(registry, { maxKeysPerName: 0 }).find(
        (x) => x.name === 'breakwater_rate_limiter_permits_total',
      );
      return value(f ? [f] : [], 'breakwater_rate_limiter_permits_total', {
        key: '_other',
        result: 'admitted',
      });
    };
    let last = 0;
    const config = {
      defaults: { rateLimiter: { limit: 100, period: '1s' } },
      keys: { maxKeys: 5 },
    };
    registry.reconfigure(config);
    for (let i = 0; i < 40; i++) {
      registry.keyedRateLimiter('api', `k${i}`).tryAcquire();
      clock.advance(1_000);
      const now = total()!;
      expect(now).toBe(i + 1);
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
  });

  it('leaves out instances built with metrics: false', () => {
    const registry = new Registry(
      { circuitBreakers: { quiet: { metrics: false } }, bulkheads: { quiet: { metrics: false } } },
      { clock: new ManualClock() },
    );
    registry.circuitBreaker('quiet');
    registry.bulkhead('quiet');
    registry.keyedCircuitBreaker('quiet', 'k');
    registry.circuitBreaker('loud');
    const names = collectMetrics(registry).flatMap((f) =>
      (f.samples as readonly { labels: MetricLabels }[]).map((s) => s.labels.name),
    );
    expect(new Set(names)).toEqual(new Set(['loud']));
  });

  it('rejects bad options with the field and the valid range', () => {
    const registry = new Registry();
    expect(() => collectMetrics(registry, { maxKeysPerName: -1 })).toThrow(OptionsError);
    expect(() => collectMetrics(registry, { maxKeysPerName: -1 })).toThrow(/maxKeysPerName/);
    expect(() => collectMetrics(registry, { durationBuckets: [1, 0.5] })).toThrow(
      /durationBuckets/,
    );
  });
});

describe('breakwater_retry_gave_up_total', () => {
  class Fatal extends Error {}

  it('counts calls on which retrying stopped with a failure, not refusals and errors it never retried', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        retries: {
          slow: {
            maxAttempts: 10,
            maxDuration: 25,
            delay: 10,
            backoff: 'constant',
            jitter: 'none',
          },
        },
        circuitBreakers: {
          db: { window: { kind: 'consecutive', threshold: 5 }, breakDuration: '1h' },
        },
      },
      { clock },
    );
    // Built in code for its `handle`, which turns down Fatal errors: they are never retried.
    registry.register(
      'calls',
      new Retry({
        clock,
        name: 'calls',
        maxAttempts: 3,
        delay: 10,
        backoff: 'constant',
        jitter: 'none',
        handle: (e) => !(e instanceof Fatal),
      }),
    );
    const retry = registry.retry('calls');
    const p = pipeline(retry, registry.circuitBreaker('db'));
    const run = async (fn: () => unknown, signal?: AbortSignal) => {
      const outcome = p.tryExecute(fn, { signal });
      for (let i = 0; i < 5; i++) {
        await flushMicrotasks();
        clock.advance(10);
      }
      return outcome;
    };
    const down = () => {
      throw new Error('down');
    };

    // 1. A success after one retry: no give-up.
    let n = 0;
    await run(() => (n++ === 0 ? down() : 'ok'));
    // 2. An error `handle` turns down, on the first attempt: never retried, no give-up.
    await run(() => {
      throw new Fatal('bad request');
    });
    // 3. Three failures, attempts used up: a give-up. The breaker has 4 consecutive failures.
    await run(down);
    expect(registry.circuitBreaker('db').state).toBe('closed');
    // 4. A 5th failure opens the breaker, which refuses the retry: a give-up after a retry.
    await run(down);
    expect(registry.circuitBreaker('db').state).toBe('open');
    // 5-7. Refused by the open breaker on the first attempt: never retried, no give-up.
    for (let i = 0; i < 3; i++) await run(() => 'unreached');
    // 8. The caller aborts during a retry delay: the caller's decision, no give-up.
    registry.circuitBreaker('db').reset();
    const controller = new AbortController();
    const aborted = p.tryExecute(down, { signal: controller.signal });
    await flushMicrotasks();
    controller.abort(new Error('caller left'));
    await aborted;
    // 9. A second policy whose next delay would pass maxDuration: a give-up.
    const slow = pipeline(registry.retry('slow')).tryExecute(down);
    for (let i = 0; i < 5; i++) {
      await flushMicrotasks();
      clock.advance(10);
    }
    await slow;

    expect(retry.stats()).toMatchObject({ retries: 5, gaveUp: 2 });
    expect(registry.retry('slow').stats()).toMatchObject({ retries: 2, gaveUp: 1 });
    const m = collectMetrics(registry);
    expect(value(m, 'breakwater_retry_gave_up_total', { name: 'calls', key: '' })).toBe(2);
    expect(value(m, 'breakwater_retry_gave_up_total', { name: 'slow', key: '' })).toBe(1);
  });
});
