import { describe, expect, it } from 'vitest';
import {
  type CallOutcomeEvent,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type Pipeline,
  pipeline,
  timeout,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { boom, pending } from '../../support/breaker.js';

// A closed breaker with no result predicate and no success listener releases an untimed
// success by a shorter path than other outcomes. These tests pin that the shorter path is
// left whenever the breaker's generation, predicate or listeners change.

const BASE: CircuitBreakerOptions = {
  window: { kind: 'consecutive', threshold: 2 },
  breakDuration: 1000,
};

/** The ways a success reaches the breaker: the gates-only path, the general executor, executeSync. */
const PATHS = [
  { name: 'breaker alone', build: (b: CircuitBreaker) => pipeline(b) },
  {
    name: 'breaker and timeout (general executor)',
    build: (b: CircuitBreaker) => pipeline(b, timeout({ timeout: 60_000, clock: b.clock })),
  },
] as const;

function make(build: (b: CircuitBreaker) => Pipeline, options: CircuitBreakerOptions = {}) {
  const clock = new ManualClock();
  const breaker = new CircuitBreaker({ clock, ...BASE, ...options });
  return { clock, breaker, p: build(breaker) };
}

async function fail(p: Pipeline): Promise<void> {
  await expect(p.execute(() => Promise.reject(boom))).rejects.toBe(boom);
}

describe.each(PATHS)('successes of a quiet breaker ($name)', ({ build }) => {
  it('count in the lifetime stats and end a run of failures', async () => {
    const { breaker, p } = make(build);
    await fail(p);
    await p.execute(async () => 'ok');
    await fail(p);
    expect(breaker.state).toBe('closed');
    expect(breaker.stats()).toMatchObject({ successes: 1, failures: 2, callsInWindow: 3 });
  });

  it('a success admitted before a trip and a reset does not end a run counted after', async () => {
    const { breaker, p } = make(build);
    const early = pending(p);
    breaker.trip();
    breaker.reset();
    await fail(p);
    expect(await early.succeed()).toMatchObject({ ok: true, value: 'ok' });
    await fail(p);
    expect(breaker.state).toBe('open');
    expect(breaker.stats().successes).toBe(1);
  });

  it('a success listener added while a call is in flight hears its success', async () => {
    const { breaker, p } = make(build);
    const early = pending(p);
    const heard: CallOutcomeEvent[] = [];
    const off = breaker.onSuccess((e) => heard.push(e));
    expect(await early.succeed('first')).toMatchObject({ ok: true, value: 'first' });
    expect(heard.map((e) => e.detail)).toEqual(['first']);
    off();
    await p.execute(async () => 'unheard');
    expect(heard).toHaveLength(1);
    await fail(p);
    await p.execute(async () => 'ok');
    await fail(p);
    expect(breaker.state).toBe('closed');
  });

  it('a result predicate given by reconfigure judges calls already in flight', async () => {
    const { breaker, p } = make(build);
    const early = pending(p);
    breaker.reconfigure({ ...BASE, handleResult: (v) => v === 'bad' });
    expect(await early.succeed('bad')).toMatchObject({ ok: true, value: 'bad' });
    await p.execute(async () => 'bad');
    expect(breaker.state).toBe('open');
    expect(breaker.stats()).toMatchObject({ successes: 0, failures: 2 });
  });

  it('after a reconfigure to a time window, successes are recorded at the time they end', async () => {
    const { clock, breaker, p } = make(build);
    clock.advance(100_000);
    breaker.reconfigure({ ...BASE, window: { kind: 'time', duration: 10_000, buckets: 10 } });
    for (let i = 0; i < 3; i++) await p.execute(async () => 'ok');
    expect(breaker.stats().callsInWindow).toBe(3);
    clock.advance(10_000);
    expect(breaker.stats().callsInWindow).toBe(0);
  });
});

describe('successes of a quiet breaker (executeSync)', () => {
  it('a success admitted before a trip and a reset does not end a run counted after', () => {
    const { breaker, p } = make((b) => pipeline(b));
    const failSync = () =>
      expect(() =>
        p.executeSync(() => {
          throw boom;
        }),
      ).toThrow(boom);
    p.executeSync(() => {
      breaker.trip();
      breaker.reset();
      failSync();
      return 'ok';
    });
    failSync();
    expect(breaker.state).toBe('open');
  });

  it('a success listener hears executeSync successes, and stops hearing them when removed', () => {
    const { breaker, p } = make((b) => pipeline(b));
    const heard: unknown[] = [];
    const off = breaker.onSuccess((e) => heard.push(e.detail));
    p.executeSync(() => 1);
    off();
    p.executeSync(() => 2);
    expect(heard).toEqual([1]);
    expect(breaker.stats().successes).toBe(2);
  });
});
