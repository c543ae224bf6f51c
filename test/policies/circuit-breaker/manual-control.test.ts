import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  type CircuitBreakerOptions,
  ErrorCode,
  IsolatedCircuitError,
  isBrokenCircuitError,
  isPolicyRejection,
} from '../../../src/index.js';
import { fail, refusal, watchedBreaker } from '../../support/breaker.js';

const make = (options: CircuitBreakerOptions = {}) =>
  watchedBreaker({
    window: { kind: 'count', size: 4, minimumCalls: 2 },
    breakDuration: 1000,
    ...options,
  });

describe('isolate()', () => {
  it('holds the breaker forced-open and refuses with IsolatedCircuitError', async () => {
    const { breaker, p, events } = make();
    breaker.isolate();
    expect(breaker.state).toBe('forced-open');
    const error = await p.execute(() => 'ok').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IsolatedCircuitError);
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(isBrokenCircuitError(error)).toBe(true);
    expect(isPolicyRejection(error)).toBe(true);
    expect(error).toMatchObject({
      code: ErrorCode.CircuitIsolated,
      name: 'IsolatedCircuitError',
      policyName: 'circuitBreaker',
      message: 'Circuit breaker "circuitBreaker" is isolated (held open by hand)',
    });
    expect((error as IsolatedCircuitError).code).toBe('ERR_BREAKWATER_CIRCUIT_ISOLATED');
    expect((error as IsolatedCircuitError).retryAfter).toBe(Infinity);
    expect(events[0]).toMatchObject({ from: 'closed', to: 'forced-open', reason: 'manual' });
  });

  it('stays isolated however much time passes', () => {
    const { clock, breaker, p } = make();
    breaker.isolate();
    clock.advance(10 * 365 * 24 * 3600 * 1000);
    expect(breaker.state).toBe('forced-open');
    expect(refusal(p)).toBeInstanceOf(IsolatedCircuitError);
  });

  it('is refcounted: the breaker closes when the last disposer is called', () => {
    const { breaker, events } = make();
    const first = breaker.isolate();
    const second = breaker.isolate();
    expect(events).toHaveLength(1);
    first();
    expect(breaker.state).toBe('forced-open');
    second();
    expect(breaker.state).toBe('closed');
    expect(events.map((e) => `${e.from}->${e.to}:${e.reason}`)).toEqual([
      'closed->forced-open:manual',
      'forced-open->closed:manual',
    ]);
  });

  it('a disposer called twice counts once', () => {
    const { breaker } = make();
    const first = breaker.isolate();
    const second = breaker.isolate();
    first();
    first();
    expect(breaker.state).toBe('forced-open');
    second();
    expect(breaker.state).toBe('closed');
  });

  it('isolating an open breaker and releasing it closes it, with the window cleared', () => {
    const { breaker, p } = make();
    fail(p, 2);
    expect(breaker.state).toBe('open');
    const release = breaker.isolate();
    release();
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('closed');
  });

  it('releasing after another manual transition leaves that state alone', () => {
    const { breaker } = make();
    const release = breaker.isolate();
    breaker.trip();
    release();
    expect(breaker.state).toBe('open');
  });

  it('an isolation made after reset() is released by its own disposer', () => {
    const { breaker } = make();
    const stale = breaker.isolate();
    breaker.reset();
    stale();
    const after = breaker.isolate();
    after();
    expect(breaker.state).toBe('closed');
  });

  it('a disposer from before reset() does not release a newer isolation', () => {
    const { breaker } = make();
    const stale = breaker.isolate();
    breaker.reset();
    breaker.isolate();
    stale();
    expect(breaker.state).toBe('forced-open');
  });
});

describe('forceOpen()', () => {
  it('refuses every call with IsolatedCircuitError until reset()', () => {
    const { clock, breaker, p, events } = make();
    breaker.forceOpen();
    clock.advance(1_000_000);
    expect(breaker.state).toBe('forced-open');
    expect(refusal(p)).toBeInstanceOf(IsolatedCircuitError);
    breaker.reset();
    expect(breaker.state).toBe('closed');
    expect(p.executeSync(() => 'ok')).toBe('ok');
    expect(events.map((e) => e.to)).toEqual(['forced-open', 'closed']);
  });

  it('forcing open twice is one transition', () => {
    const { breaker, events } = make();
    breaker.forceOpen();
    breaker.forceOpen();
    expect(events).toHaveLength(1);
  });
});

describe('reset()', () => {
  it('closes an open breaker at once', () => {
    const { breaker, p, events } = make();
    fail(p, 2);
    breaker.reset();
    expect(breaker.state).toBe('closed');
    expect(events.at(-1)).toMatchObject({ from: 'open', to: 'closed', reason: 'manual' });
  });

  it('closes a half-open breaker and forgets its probes', () => {
    const { clock, breaker, p } = make();
    fail(p, 2);
    clock.advance(1000);
    const probe = p.execute(() => new Promise(() => {}));
    void probe;
    expect(breaker.stats().probesInFlight).toBe(1);
    breaker.reset();
    expect(breaker.stats()).toMatchObject({ state: 'closed', probesInFlight: 0 });
  });

  it('clears the window of a closed breaker', () => {
    const { breaker, p } = make();
    fail(p);
    breaker.reset();
    expect(breaker.stats()).toMatchObject({ callsInWindow: 0, failuresInWindow: 0 });
    fail(p);
    expect(breaker.state).toBe('closed');
  });

  it('ends every isolation at once', () => {
    const { breaker } = make();
    breaker.isolate();
    breaker.isolate();
    breaker.reset();
    expect(breaker.state).toBe('closed');
  });

  it('leaves the lifetime counters alone', () => {
    const { breaker, p } = make();
    fail(p, 2);
    refusal(p);
    breaker.reset();
    expect(breaker.stats()).toMatchObject({ failures: 2, rejections: 1 });
  });
});

describe('trip()', () => {
  it('opens a closed breaker now for breakDuration, with reason manual', () => {
    const { clock, breaker, p, events } = make();
    breaker.trip();
    expect(breaker.state).toBe('open');
    expect(refusal(p)).not.toBeInstanceOf(IsolatedCircuitError);
    expect(events[0]).toMatchObject({
      from: 'closed',
      to: 'open',
      reason: 'manual',
      breakDuration: 1000,
      callsInWindow: 0,
    });
    expect(events[0]?.failureRate).toBeNaN();
    clock.advance(1000);
    expect(breaker.state).toBe('half-open');
  });

  it('re-tripping an open breaker starts a new break period', () => {
    const { clock, breaker } = make();
    breaker.trip();
    clock.advance(600);
    breaker.trip();
    clock.advance(600);
    expect(breaker.state).toBe('open');
    clock.advance(400);
    expect(breaker.state).toBe('half-open');
  });

  it('clears the window', () => {
    const { clock, breaker, p } = make();
    fail(p);
    breaker.trip();
    clock.advance(1000);
    p.executeSync(() => 'ok');
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().callsInWindow).toBe(0);
  });

  it('applies a due open -> half-open transition before tripping', () => {
    const { clock, breaker, events } = make();
    breaker.trip();
    clock.advance(1500);
    breaker.trip();
    expect(events.map((e) => `${e.from}->${e.to}`)).toEqual([
      'closed->open',
      'open->half-open',
      'half-open->open',
    ]);
  });
});

describe('disable()', () => {
  it('lets every call through and never opens', () => {
    const { breaker, p } = make();
    breaker.disable();
    fail(p, 10);
    expect(breaker.state).toBe('disabled');
    expect(p.executeSync(() => 'ok')).toBe('ok');
  });

  it('records nothing in the window while disabled', () => {
    const { breaker, p } = make();
    fail(p);
    breaker.disable();
    fail(p, 5);
    expect(breaker.stats()).toMatchObject({ callsInWindow: 1, failuresInWindow: 1, failures: 6 });
  });

  it('goes on counting calls and emitting outcome events, so metrics still show the traffic', () => {
    const { breaker, p } = make();
    breaker.disable();
    const events: string[] = [];
    breaker.onSuccess(() => events.push('success'));
    breaker.onFailure(() => events.push('failure'));
    fail(p, 2);
    p.executeSync(() => 'ok');
    expect(events).toEqual(['failure', 'failure', 'success']);
    expect(breaker.stats()).toMatchObject({
      state: 'disabled',
      successes: 1,
      failures: 2,
      callsInWindow: 0,
    });
  });

  it('lets calls through even when disabled while open', () => {
    const { breaker, p } = make();
    fail(p, 2);
    breaker.disable();
    expect(p.executeSync(() => 'ok')).toBe('ok');
  });

  it('reset() re-enables it with an empty window', () => {
    const { breaker, p } = make();
    fail(p);
    breaker.disable();
    breaker.reset();
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
  });
});

describe('metricsOnly()', () => {
  it('records outcomes but never opens', () => {
    const { breaker, p, events } = make();
    breaker.metricsOnly();
    fail(p, 4);
    expect(breaker.state).toBe('metrics-only');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 4, failuresInWindow: 4 });
    expect(events).toHaveLength(1);
  });

  it('starts from an empty window', () => {
    const { breaker, p } = make();
    fail(p);
    breaker.metricsOnly();
    expect(breaker.stats().callsInWindow).toBe(0);
    p.executeSync(() => 'ok');
    expect(breaker.stats()).toMatchObject({ callsInWindow: 1, failuresInWindow: 0 });
  });

  it('lets calls through when switched on while open', () => {
    const { breaker, p } = make();
    fail(p, 2);
    breaker.metricsOnly();
    expect(p.executeSync(() => 'ok')).toBe('ok');
  });

  it('reset() turns the breaker back on with an empty window', () => {
    const { breaker, p } = make();
    breaker.metricsOnly();
    fail(p, 4);
    breaker.reset();
    expect(breaker.stats()).toMatchObject({ state: 'closed', callsInWindow: 0 });
    fail(p);
    expect(breaker.state).toBe('closed');
    fail(p);
    expect(breaker.state).toBe('open');
  });

  it('switching to metrics-only twice keeps what was recorded', () => {
    const { breaker, p } = make();
    breaker.metricsOnly();
    fail(p, 3);
    breaker.metricsOnly();
    expect(breaker.stats().callsInWindow).toBe(3);
  });
});
