import { describe, expect, it } from 'vitest';
import {
  type BrokenCircuitError,
  CircuitBreaker,
  type CircuitBreakerOptions,
  IsolatedCircuitError,
  pipeline,
} from '../../../src/index.js';
import {
  type ResolvedBreakerOptions,
  resolveBreakerOptions,
  sameResolved,
} from '../../../src/policies/circuit-breaker/options.js';
import { ManualClock } from '../../../src/testing/index.js';
import {
  breakerOnClock,
  madeErrors,
  pending,
  refusal,
  resolvedOptionsOf,
  run,
} from '../../support/breaker.js';

// What a breaker makes when it is built and what it makes only when first needed: most
// breakers never refuse a call nor get a listener, so those parts are made on first use.

const make = (options: CircuitBreakerOptions = {}) =>
  breakerOnClock({
    window: { kind: 'consecutive', threshold: 3 },
    breakDuration: 1000,
    ...options,
  });

describe('refusal errors, made on the first refusal', () => {
  it('a breaker that never refuses makes no refusal error', () => {
    const { breaker, p } = make();
    run(p, 'SFFSFF');
    expect(breaker.state).toBe('closed');
    expect(madeErrors(breaker).open).toBeUndefined();
    expect(madeErrors(breaker).isolated).toBeUndefined();
  });

  it('the first refusal makes the error, and the second refusal rejects with that same object', () => {
    const { breaker, p } = make();
    breaker.trip();
    expect(madeErrors(breaker).open).toBeUndefined();
    const first = refusal(p);
    expect(madeErrors(breaker).open).toBe(first);
    expect(refusal(p)).toBe(first);
    // Refused while open, never while isolated: no isolated error either.
    expect(madeErrors(breaker).isolated).toBeUndefined();
  });

  it('the isolated error is made on the first refusal while isolated, then reused', () => {
    const { breaker, p } = make();
    const release = breaker.isolate();
    expect(madeErrors(breaker).isolated).toBeUndefined();
    const first = refusal(p);
    expect(first).toBeInstanceOf(IsolatedCircuitError);
    expect(refusal(p)).toBe(first);
    expect(madeErrors(breaker).open).toBeUndefined();
    release();
  });

  it('a half-open refusal has an error of its own; the open one follows the next opening', async () => {
    const { clock, breaker, p } = make();
    breaker.trip();
    clock.advance(1000);
    const probe = pending(p);
    expect(breaker.state).toBe('half-open');
    // A half-open refusal has an error of its own; the open one is made at the next opening.
    const halfOpen = refusal(p) as BrokenCircuitError;
    expect(halfOpen.message).toMatch(/half-open/);
    await probe.fail();
    expect(breaker.state).toBe('open');
    const error = refusal(p) as BrokenCircuitError;
    expect(error).not.toBe(halfOpen);
    expect(refusal(p)).toBe(error);
    expect(error.retryAfter).toBe(1000);
  });

  it('a breaker restored open makes its error with the restored break', () => {
    const { clock, breaker } = make();
    breaker.trip();
    clock.advance(400);
    const restored = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 3 },
      breakDuration: 1000,
      initialState: breaker.toJSON(),
    });
    expect(madeErrors(restored).open).toBeUndefined();
    const error = refusal(pipeline(restored)) as BrokenCircuitError;
    expect(error.retryAfter).toBe(600);
  });
});

describe('listener lists, made on the first listener', () => {
  it("a listener of one breaker never hears another breaker's events", () => {
    const a = make();
    const b = make();
    const heard: string[] = [];
    a.breaker.onStateChange((e) => heard.push(`state ${e.to}`));
    a.breaker.onSuccess(() => heard.push('success'));
    a.breaker.onFailure(() => heard.push('failure'));
    a.breaker.onRejected(() => heard.push('rejected'));
    run(b.p, 'SFFF');
    expect(b.breaker.state).toBe('open');
    refusal(b.p);
    expect(heard).toEqual([]);
    run(a.p, 'SFFF');
    refusal(a.p);
    expect(heard).toEqual(['success', 'failure', 'failure', 'failure', 'state open', 'rejected']);
  });

  it('dispose drops every listener; a disposer from before it is harmless; new listeners are heard', () => {
    const { breaker, p } = make();
    const heard: string[] = [];
    const off = breaker.onFailure(() => heard.push('before'));
    breaker.dispose();
    run(p, 'F');
    off();
    breaker.onFailure(() => heard.push('after'));
    run(p, 'F');
    expect(heard).toEqual(['after']);
  });
});

describe('count windows of one size', () => {
  const count = (clock: ManualClock) =>
    new CircuitBreaker({
      clock,
      window: { kind: 'count', size: 4 },
      failureRateThreshold: 0.75,
      breakDuration: 1000,
    });

  it('keep their outcomes apart, before and after either records a failure', () => {
    const clock = new ManualClock();
    const a = count(clock);
    const b = count(clock);
    run(pipeline(a), 'SFF');
    // Made after another window of its size recorded failures.
    const c = count(clock);
    run(pipeline(b), 'SSSSSS');
    run(pipeline(c), 'SSSSSSSSS');
    expect(b.stats()).toMatchObject({ callsInWindow: 4, failuresInWindow: 0, state: 'closed' });
    expect(c.stats()).toMatchObject({ callsInWindow: 4, failuresInWindow: 0, state: 'closed' });
    expect(b.toJSON().window.data).toEqual([0, 0, 0, 0]);
    expect(a.toJSON().window.data).toEqual([0, 1, 1]);
    run(pipeline(b), 'FFF');
    expect(b.state).toBe('open');
    expect(c.stats().failuresInWindow).toBe(0);
    run(pipeline(a), 'F');
    expect(a.state).toBe('open');
  });
});

describe('resolved options, shared by breakers built from equal options', () => {
  it('breakers built one after another from equal options share one resolved options object', () => {
    const clock = new ManualClock();
    const options = (): CircuitBreakerOptions => ({
      clock,
      window: { kind: 'consecutive', threshold: 5 },
      breakDuration: 10_000,
    });
    const a = new CircuitBreaker(options());
    const b = new CircuitBreaker(options());
    expect(resolvedOptionsOf(b)).toBe(resolvedOptionsOf(a));
    const c = new CircuitBreaker({ ...options(), breakDuration: 20_000 });
    expect(resolvedOptionsOf(c)).not.toBe(resolvedOptionsOf(a));
    expect(resolvedOptionsOf(c).breakDuration).toBe(20_000);
  });

  it('a breaker restored from a snapshot keeps options of its own', () => {
    const { breaker } = make();
    const snapshot = breaker.toJSON();
    const build = () =>
      new CircuitBreaker({
        clock: breaker.clock,
        window: { kind: 'consecutive', threshold: 3 },
        breakDuration: 1000,
        initialState: snapshot,
      });
    expect(resolvedOptionsOf(build())).not.toBe(resolvedOptionsOf(build()));
  });

  it('options that differ in any one resolved field are not the same', () => {
    const base = resolveBreakerOptions({});
    for (const key of Object.keys(base)) {
      const other = { ...base, [key]: Symbol(key) } as unknown as ResolvedBreakerOptions;
      expect({ key, same: sameResolved(base, other) }).toEqual({ key, same: false });
    }
    expect(sameResolved(base, { ...base })).toBe(true);
  });

  it('metrics left out and metrics: true resolve apart, so reconfigure still keeps what was built', () => {
    const clock = new ManualClock();
    const sampled = new CircuitBreaker({ clock, metrics: { latency: 4 } });
    new CircuitBreaker({ clock, metrics: true });
    sampled.reconfigure({});
    expect(sampled.latencyEvery).toBe(4);
  });
});
