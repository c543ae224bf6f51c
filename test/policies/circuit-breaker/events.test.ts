import { afterEach, describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  type CallOutcomeEvent,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitRejectedEvent,
  IsolatedCircuitError,
  pipeline,
  setListenerErrorHandler,
} from '../../../src/index.js';
import { boom, fail, succeed, watchedBreaker } from '../../support/breaker.js';

const make = (options: CircuitBreakerOptions = {}) =>
  watchedBreaker({
    window: { kind: 'count', size: 4, minimumCalls: 4 },
    breakDuration: 1000,
    ...options,
  });

afterEach(() => {
  setListenerErrorHandler((error) => console.error('breakwater: an event listener threw', error));
});

describe('onStateChange', () => {
  it('reports an opening from the window with its rates and break duration', () => {
    const { p, events } = make();
    succeed(p);
    fail(p, 3);
    expect(events).toEqual([
      {
        from: 'closed',
        to: 'open',
        reason: 'failure-rate',
        generation: 1,
        failureRate: 0.75,
        slowCallRate: 0,
        callsInWindow: 4,
        breakDuration: 1000,
      },
    ]);
  });

  it('reports the way through half-open back to closed', () => {
    const { clock, breaker, p, events } = make();
    fail(p, 4);
    clock.advance(1000);
    expect(breaker.state).toBe('half-open');
    succeed(p);
    expect(events.slice(1)).toEqual([
      {
        from: 'open',
        to: 'half-open',
        reason: 'break-elapsed',
        generation: 2,
        failureRate: Number.NaN,
        slowCallRate: Number.NaN,
        callsInWindow: 0,
        breakDuration: 0,
      },
      {
        from: 'half-open',
        to: 'closed',
        reason: 'probes-succeeded',
        generation: 3,
        failureRate: Number.NaN,
        slowCallRate: Number.NaN,
        callsInWindow: 0,
        breakDuration: 0,
      },
    ]);
  });

  it('reports a failed probe re-opening it, with the backed-off break', () => {
    const { clock, p, events } = make({ breakBackoff: { multiplier: 3 } });
    fail(p, 4);
    clock.advance(1000);
    fail(p);
    expect(events.at(-1)).toEqual({
      from: 'half-open',
      to: 'open',
      reason: 'probes-failed',
      generation: 3,
      failureRate: Number.NaN,
      slowCallRate: Number.NaN,
      callsInWindow: 0,
      breakDuration: 3000,
    });
  });

  it('reports manual transitions with reason manual', () => {
    const { breaker, events } = make();
    const release = breaker.isolate();
    release();
    breaker.disable();
    breaker.metricsOnly();
    breaker.forceOpen();
    breaker.trip();
    breaker.reset();
    expect(events.map((e) => [e.from, e.to, e.reason])).toEqual([
      ['closed', 'forced-open', 'manual'],
      ['forced-open', 'closed', 'manual'],
      ['closed', 'disabled', 'manual'],
      ['disabled', 'metrics-only', 'manual'],
      ['metrics-only', 'forced-open', 'manual'],
      ['forced-open', 'open', 'manual'],
      ['open', 'closed', 'manual'],
    ]);
    expect(events.find((e) => e.to === 'open')?.breakDuration).toBe(1000);
  });

  it('fires exactly one open event when several calls in flight fail together', async () => {
    const { p, events } = make({ window: { kind: 'consecutive', threshold: 1 } });
    const rejects: ((e: unknown) => void)[] = [];
    const calls = [0, 1, 2].map(() =>
      p.execute(() => new Promise((_, reject) => rejects.push(reject))).catch(() => {}),
    );
    for (const reject of rejects) reject(boom);
    await Promise.all(calls);
    expect(events.filter((e) => e.to === 'open')).toHaveLength(1);
  });

  it('fires exactly one open event per opening over repeated cycles', () => {
    const { clock, p, events } = make();
    for (let cycle = 0; cycle < 3; cycle++) {
      fail(p, 4);
      clock.advance(1000);
      succeed(p);
    }
    expect(events.filter((e) => e.to === 'open')).toHaveLength(3);
    expect(events.filter((e) => e.to === 'closed')).toHaveLength(3);
  });
});

describe('onSuccess and onFailure', () => {
  it('untimed calls report their value or error, elapsed NaN and slow false', async () => {
    const { breaker, p } = make();
    const successes: CallOutcomeEvent[] = [];
    const failures: CallOutcomeEvent[] = [];
    breaker.onSuccess((e) => successes.push(e));
    breaker.onFailure((e) => failures.push(e));
    await p.execute(() => 42);
    await p.execute(() => Promise.reject(boom)).catch(() => {});
    expect(successes).toEqual([{ detail: 42, elapsed: Number.NaN, slow: false }]);
    expect(failures).toEqual([{ detail: boom, elapsed: Number.NaN, slow: false }]);
  });

  it('timed calls report how long they took and whether that was slow', async () => {
    const { clock, breaker, p } = make({ slowCallDuration: 100 });
    const successes: CallOutcomeEvent[] = [];
    const failures: CallOutcomeEvent[] = [];
    breaker.onSuccess((e) => successes.push(e));
    breaker.onFailure((e) => failures.push(e));
    const fast = p.execute(() => new Promise((resolve) => clock.setTimer(() => resolve('a'), 40)));
    clock.advance(40);
    await fast;
    const slow = p.execute(
      () => new Promise((_, reject) => clock.setTimer(() => reject(boom), 150)),
    );
    clock.advance(150);
    await slow.catch(() => {});
    expect(successes).toEqual([{ detail: 'a', elapsed: 40, slow: false }]);
    expect(failures).toEqual([{ detail: boom, elapsed: 150, slow: true }]);
  });

  it('ignored outcomes fire neither', async () => {
    const { clock, breaker } = make();
    let fired = 0;
    breaker.onSuccess(() => fired++);
    breaker.onFailure(() => fired++);
    const inner = new CircuitBreaker({ clock, name: 'inner' });
    inner.trip();
    await pipeline(breaker, inner).tryExecute(() => 'ok');
    expect(fired).toBe(0);
  });
});

describe('onRejected', () => {
  it('reports the refusal error and the state that refused', async () => {
    const { clock, breaker, p } = make();
    const rejected: CircuitRejectedEvent[] = [];
    breaker.onRejected((e) => rejected.push(e));
    breaker.trip();
    const openError = await p.execute(() => 'ok').catch((e: unknown) => e);
    clock.advance(1000);
    const probe = p.execute(() => new Promise(() => {}));
    void probe;
    const halfOpenError = await p.execute(() => 'ok').catch((e: unknown) => e);
    breaker.isolate();
    const isolatedError = await p.execute(() => 'ok').catch((e: unknown) => e);
    expect(rejected).toEqual([
      { error: openError, state: 'open' },
      { error: halfOpenError, state: 'half-open' },
      { error: isolatedError, state: 'forced-open' },
    ]);
    expect(rejected[0]!.error).toBeInstanceOf(BrokenCircuitError);
    expect(rejected[2]!.error).toBeInstanceOf(IsolatedCircuitError);
    expect(breaker.stats().rejections).toBe(3);
  });
});

describe('listener lifetime', () => {
  it('the disposer returned by each on* stops that listener only', () => {
    const { breaker, p } = make({ window: { kind: 'consecutive', threshold: 1 } });
    const seen: string[] = [];
    const stopA = breaker.onStateChange(() => seen.push('a'));
    breaker.onStateChange(() => seen.push('b'));
    const stopS = breaker.onSuccess(() => seen.push('success'));
    const stopF = breaker.onFailure(() => seen.push('failure'));
    const stopR = breaker.onRejected(() => seen.push('rejected'));
    stopA();
    stopS();
    stopF();
    stopR();
    succeed(p);
    fail(p);
    expect(() => p.executeSync(() => 'ok')).toThrow(BrokenCircuitError);
    expect(seen).toEqual(['b']);
  });

  it('calling a disposer twice is harmless and removes nothing else', () => {
    const { breaker } = make();
    const seen: string[] = [];
    const listener = () => seen.push('x');
    const first = breaker.onStateChange(listener);
    breaker.onStateChange(listener);
    first();
    first();
    breaker.trip();
    expect(seen).toEqual(['x']);
  });

  it('a listener may unsubscribe itself while being called', () => {
    const { breaker } = make();
    const seen: string[] = [];
    const stop = breaker.onStateChange(() => {
      seen.push('once');
      stop();
    });
    breaker.onStateChange(() => seen.push('always'));
    breaker.trip();
    breaker.reset();
    expect(seen).toEqual(['once', 'always', 'always']);
  });

  it('dispose() removes every listener', () => {
    const { breaker, p } = make();
    let fired = 0;
    breaker.onStateChange(() => fired++);
    breaker.onSuccess(() => fired++);
    breaker.onFailure(() => fired++);
    breaker.onRejected(() => fired++);
    breaker.dispose();
    succeed(p);
    fail(p, 3);
    expect(() => p.executeSync(() => 'ok')).toThrow(BrokenCircuitError);
    expect(fired).toBe(0);
    expect(breaker.state).toBe('open');
  });
});

describe('throwing listeners', () => {
  it('never break the call, the transition or the other listeners', async () => {
    const reported: unknown[] = [];
    setListenerErrorHandler((error) => reported.push(error));
    const { breaker, p } = make({ window: { kind: 'consecutive', threshold: 2 } });
    const bad = new Error('listener bug');
    const seen: string[] = [];
    breaker.onStateChange(() => {
      throw bad;
    });
    breaker.onStateChange((e) => seen.push(e.to));
    breaker.onSuccess(() => {
      throw bad;
    });
    breaker.onFailure(() => {
      throw bad;
    });
    breaker.onRejected(() => {
      throw bad;
    });
    await expect(p.execute(() => 'value')).resolves.toBe('value');
    expect(p.executeSync(() => 'value')).toBe('value');
    fail(p, 2);
    expect(breaker.state).toBe('open');
    await expect(p.execute(() => 'value')).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(seen).toEqual(['open']);
    // 2 successes, 2 failures, 1 state change, 1 rejection.
    expect(reported).toHaveLength(6);
    expect(reported.every((e) => e === bad)).toBe(true);
  });

  it('a throwing error handler is swallowed too', () => {
    setListenerErrorHandler(() => {
      throw new Error('handler bug');
    });
    const { breaker } = make();
    breaker.onStateChange(() => {
      throw new Error('listener bug');
    });
    expect(() => breaker.trip()).not.toThrow();
    expect(breaker.state).toBe('open');
  });
});
