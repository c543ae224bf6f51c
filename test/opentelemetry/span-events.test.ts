import { channel } from 'node:diagnostics_channel';
import type { TimedEvent } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors/OptionsError.js';
import {
  bulkhead,
  circuitBreaker,
  diagnosticsChannels,
  pipeline,
  Registry,
  rateLimiter,
  retry,
  timeout,
} from '../../src/index.js';
import { spanEventNames, traceBreakwaterEvents } from '../../src/opentelemetry/index.js';
import { configSchema, type PolicyKindDescriptor } from '../../src/protocol/kind.js';
import { ManualClock } from '../../src/testing/index.js';
import { startTracing, type Tracing } from './tracing.js';

let tracing: Tracing;
let stop: () => void;

beforeEach(() => {
  tracing = startTracing();
  stop = traceBreakwaterEvents();
});

afterEach(async () => {
  stop();
  await tracing.close();
});

function events(spanName: string): { name: string; attributes: Record<string, unknown> }[] {
  return tracing
    .span(spanName)
    .events.map((e: TimedEvent) => ({ name: e.name, attributes: { ...e.attributes } }));
}

/** Runs `fn` inside an active span named `name` and ends the span when it settles. */
function inSpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  return tracing.tracer.startActiveSpan(name, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}

describe('traceBreakwaterEvents', () => {
  it('adds retries, the breaker opening and its rejection to the span the pipeline runs in', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      retry({
        name: 'pay-retry',
        maxAttempts: 4,
        delay: 100,
        backoff: 'constant',
        jitter: 'none',
        clock,
      }),
      circuitBreaker({
        name: 'pay',
        window: { kind: 'consecutive', threshold: 2 },
        breakDuration: 5_000,
        clock,
      }),
    );
    const call = inSpan('checkout', () =>
      p.tryExecute(() => {
        throw new TypeError('connection refused');
      }),
    );
    await clock.runAll();
    const result = await call;
    expect(result.ok).toBe(false);

    expect(events('checkout')).toEqual([
      {
        name: 'breakwater.retry',
        attributes: {
          'breakwater.policy.name': 'pay-retry',
          'breakwater.retry.attempt': 1,
          'breakwater.retry.delay_ms': 100,
          'exception.type': 'TypeError',
          'exception.message': 'connection refused',
        },
      },
      {
        name: 'breakwater.circuit_breaker.state_change',
        attributes: {
          'breakwater.policy.name': 'pay',
          'breakwater.circuit_breaker.from': 'closed',
          'breakwater.circuit_breaker.to': 'open',
          'breakwater.circuit_breaker.reason': 'consecutive-failures',
          'breakwater.circuit_breaker.generation': 1,
          'breakwater.circuit_breaker.calls_in_window': 2,
          'breakwater.circuit_breaker.break_duration_ms': 5_000,
        },
      },
      {
        name: 'breakwater.retry',
        attributes: {
          'breakwater.policy.name': 'pay-retry',
          'breakwater.retry.attempt': 2,
          'breakwater.retry.delay_ms': 100,
          'exception.type': 'TypeError',
          'exception.message': 'connection refused',
        },
      },
      {
        name: 'breakwater.rejected',
        attributes: {
          'breakwater.policy.kind': 'circuitBreaker',
          'breakwater.policy.name': 'pay',
          'breakwater.rejection.reason': 'open',
        },
      },
    ]);
  });

  it('puts the half-open transition on the span of the first call after the break', async () => {
    const clock = new ManualClock();
    const breaker = circuitBreaker({
      name: 'inventory',
      window: { kind: 'consecutive', threshold: 1 },
      breakDuration: 1_000,
      clock,
    });
    const p = pipeline(breaker);
    await inSpan('fails', () => p.tryExecute(() => Promise.reject(new Error('down'))));
    clock.advance(1_000);
    await inSpan('probe', () => p.tryExecute(() => Promise.resolve('ok')));

    expect(events('fails').map((e) => e.attributes['breakwater.circuit_breaker.to'])).toEqual([
      'open',
    ]);
    expect(events('probe')).toEqual([
      {
        name: spanEventNames.stateChange,
        attributes: expect.objectContaining({
          'breakwater.policy.name': 'inventory',
          'breakwater.circuit_breaker.from': 'open',
          'breakwater.circuit_breaker.to': 'half-open',
          'breakwater.circuit_breaker.reason': 'break-elapsed',
        }),
      },
      {
        name: spanEventNames.stateChange,
        attributes: expect.objectContaining({
          'breakwater.circuit_breaker.from': 'half-open',
          'breakwater.circuit_breaker.to': 'closed',
          'breakwater.circuit_breaker.reason': 'probes-succeeded',
        }),
      },
    ]);
    // Only an opening carries a break duration; the rates only an opening from closed.
    for (const e of events('probe')) {
      expect(e.attributes).not.toHaveProperty('breakwater.circuit_breaker.break_duration_ms');
      expect(e.attributes).not.toHaveProperty('breakwater.circuit_breaker.failure_rate');
    }
  });

  it('reports the failure and slow-call rates of a breaker opened by its failure rate', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      circuitBreaker({
        name: 'search',
        window: { kind: 'count', size: 4, minimumCalls: 4 },
        failureRateThreshold: 0.5,
        clock,
      }),
    );
    await inSpan('load', async () => {
      await p.tryExecute(() => 'a');
      await p.tryExecute(() => 'b');
      await p.tryExecute(() => Promise.reject(new Error('x')));
      await p.tryExecute(() => Promise.reject(new Error('y')));
    });
    expect(events('load')).toEqual([
      {
        name: spanEventNames.stateChange,
        attributes: expect.objectContaining({
          'breakwater.circuit_breaker.to': 'open',
          'breakwater.circuit_breaker.reason': 'failure-rate',
          'breakwater.circuit_breaker.failure_rate': 0.5,
          'breakwater.circuit_breaker.slow_call_rate': 0,
          'breakwater.circuit_breaker.calls_in_window': 4,
        }),
      },
    ]);
  });

  it('adds bulkhead and rate limiter rejections with their kind and reason', async () => {
    const clock = new ManualClock();
    const bh = pipeline(bulkhead({ name: 'db', maxConcurrent: 1, maxQueue: 0, clock }));
    const rl = pipeline(rateLimiter({ name: 'api', limit: 1, period: 1_000, clock }));
    await inSpan('busy', async () => {
      let release!: () => void;
      const first = bh.tryExecute(() => new Promise<void>((r) => (release = r)));
      const second = await bh.tryExecute(() => 'never');
      expect(second.ok).toBe(false);
      release();
      await first;
      await rl.tryExecute(() => 1);
      expect((await rl.tryExecute(() => 2)).ok).toBe(false);
    });
    expect(events('busy')).toEqual([
      {
        name: 'breakwater.rejected',
        attributes: {
          'breakwater.policy.kind': 'bulkhead',
          'breakwater.policy.name': 'db',
          'breakwater.rejection.reason': 'full',
        },
      },
      {
        name: 'breakwater.rejected',
        attributes: {
          'breakwater.policy.kind': 'rateLimiter',
          'breakwater.policy.name': 'api',
          'breakwater.rejection.reason': 'rate-limited',
        },
      },
    ]);
  });

  it('adds no event for timeouts and queue timeouts, which fire outside the call they end', async () => {
    const clock = new ManualClock();
    const t = pipeline(timeout({ name: 'slow-report', timeout: 250, clock }));
    const bh = pipeline(
      bulkhead({ name: 'db', maxConcurrent: 1, maxQueue: 1, queueTimeout: 100, clock }),
    );
    const never = ({ signal }: { signal: AbortSignal }) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const timedOut = inSpan('report', () => t.tryExecute(never));
    let release!: () => void;
    const holder = inSpan('holder', () =>
      bh.tryExecute(() => new Promise<void>((r) => (release = r))),
    );
    const queued = inSpan('queued', () => bh.tryExecute(() => 'late'));
    // The shared timers fire while another span is active: nothing may land on it.
    await inSpan('bystander', () => clock.advanceAsync(250));
    expect((await timedOut).ok).toBe(false);
    expect((await queued).ok).toBe(false);
    for (const name of ['report', 'queued', 'bystander']) expect(events(name)).toEqual([]);
    release();
    expect((await holder).ok).toBe(true);
  });

  it('names a keyed breaker of a registry "<name>:<key>", a hostile key kept as plain text', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { circuitBreakers: { api: { window: { kind: 'consecutive', threshold: 1 } } } },
      { clock },
    );
    const key = 'a"b\\c\nd<img src=x>';
    await inSpan('tenant', () =>
      pipeline(registry.keyedCircuitBreaker('api', key)).tryExecute(() => {
        throw new Error('no');
      }),
    );
    expect(events('tenant')[0]!.attributes['breakwater.policy.name']).toBe(`api:${key}`);
    registry.dispose();
  });

  it('does nothing when no span is active, and records on spans only while active', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      circuitBreaker({ name: 'x', window: { kind: 'consecutive', threshold: 1 }, clock }),
    );
    const idle = tracing.tracer.startSpan('not-active');
    await expect(p.tryExecute(() => Promise.reject(new Error('e')))).resolves.toMatchObject({
      ok: false,
    });
    await p.tryExecute(() => 1);
    idle.end();
    expect(events('not-active')).toEqual([]);
  });

  it('unsubscribes on dispose, after which the channels have no subscribers', async () => {
    const { retry: r, rejected, stateChange, timeout: t } = diagnosticsChannels;
    for (const name of [r, rejected, stateChange]) expect(channel(name).hasSubscribers).toBe(true);
    expect(channel(t).hasSubscribers).toBe(false);
    stop();
    stop();
    for (const name of Object.values(diagnosticsChannels)) {
      expect(channel(name).hasSubscribers).toBe(false);
    }
    const clock = new ManualClock();
    const p = pipeline(
      circuitBreaker({ name: 'y', window: { kind: 'consecutive', threshold: 1 }, clock }),
    );
    await inSpan('after', () => p.tryExecute(() => Promise.reject(new Error('e'))));
    expect(events('after')).toEqual([]);
  });
});

/** A kind defined outside the library, which publishes its own channel. */
const SHUT_CHANNEL = 'test:valve:shut';
const valveKind: PolicyKindDescriptor<{ name: string }> = {
  name: 'valve',
  label: 'valve',
  section: 'valves',
  is: (value): value is { name: string } => false,
  create: () => ({ name: 'valve' }),
  resolve: (data) => data,
  reconfigure: () => () => {},
  dispose() {},
  view: () => ({ stats: {} }),
  config: { schema: configSchema([]) },
  spanEvents: [
    {
      channel: SHUT_CHANNEL,
      name: 'test.valve.shut',
      attributes: (m) => (m.quiet ? undefined : { 'test.valve.name': String(m.name) }),
    },
  ],
};

describe('traceBreakwaterEvents with kinds defined outside the library', () => {
  it('adds the span events a kind given in `kinds` lists, from its own channel', async () => {
    stop();
    stop = traceBreakwaterEvents({ kinds: [valveKind] });
    await inSpan('pumping', async () => {
      channel(SHUT_CHANNEL).publish({ name: 'water' });
      // A message the kind's event turns down makes no event.
      channel(SHUT_CHANNEL).publish({ name: 'steam', quiet: true });
    });
    expect(events('pumping')).toEqual([
      { name: 'test.valve.shut', attributes: { 'test.valve.name': 'water' } },
    ]);
    stop();
    expect(channel(SHUT_CHANNEL).hasSubscribers).toBe(false);
  });

  it('adds no event for a kind it was not given', async () => {
    expect(channel(SHUT_CHANNEL).hasSubscribers).toBe(false);
    await inSpan('idle', async () => channel(SHUT_CHANNEL).publish({ name: 'water' }));
    expect(events('idle')).toEqual([]);
  });

  it('throws OptionsError naming the option for kinds that are not policy kinds', () => {
    expect(() => traceBreakwaterEvents({ kinds: [{}] as never })).toThrow(OptionsError);
    expect(() => traceBreakwaterEvents({ kinds: [{}] as never })).toThrow(/kinds\[0\]/);
    expect(() => traceBreakwaterEvents({ kinds: 'valve' as never })).toThrow(/kinds/);
    expect(() => traceBreakwaterEvents({ kind: [] } as never)).toThrow(/did you mean `kinds`/);
    expect(() => traceBreakwaterEvents({ kinds: [{ ...valveKind, name: 'retry' }] })).toThrow(
      /kinds\[0\]\.name/,
    );
  });
});
