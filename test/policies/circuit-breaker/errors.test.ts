import { describe, expect, it } from 'vitest';
import {
  BreakwaterError,
  BrokenCircuitError,
  type CircuitBreakerOptions,
  ErrorCode,
  IsolatedCircuitError,
  isBrokenCircuitError,
  isPolicyRejection,
  PolicyRejectedError,
} from '../../../src/index.js';
import { breakerOnClock } from '../../support/breaker.js';

const make = (options: CircuitBreakerOptions = {}) =>
  breakerOnClock({ breakDuration: 1000, ...options });

const STACK_FRAME = /\n\s+at /;

describe('BrokenCircuitError', () => {
  it('is what an open breaker rejects with, as a branded policy refusal', async () => {
    const { breaker, p } = make({ name: 'db' });
    breaker.trip();
    const error = await p.execute(() => 'ok').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(error).toBeInstanceOf(PolicyRejectedError);
    expect(error).toBeInstanceOf(BreakwaterError);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(IsolatedCircuitError);
    expect(isBrokenCircuitError(error)).toBe(true);
    expect(isPolicyRejection(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'BrokenCircuitError',
      code: ErrorCode.CircuitOpen,
      policy: 'circuitBreaker',
      policyName: 'db',
      message: 'Circuit breaker "db" is open',
    });
  });

  it('says half-open when the probe slots are taken, with retryAfter until the probes must decide', async () => {
    const { clock, breaker, p } = make({ name: 'db', halfOpen: { maxWait: 5_000 } });
    breaker.trip();
    clock.advance(1000);
    expect(breaker.state).toBe('half-open');
    const probe = p.execute(() => new Promise<string>(() => {})); // holds the only probe slot
    clock.advance(1_500);
    const error = (await p.execute(() => 'ok').catch((e: unknown) => e)) as BrokenCircuitError;
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(error.code).toBe(ErrorCode.CircuitOpen);
    expect(error.message).toBe(
      'Circuit breaker "db" is half-open with every probe slot taken: retryAfter is the most its probes may take to decide',
    );
    // The probe started 1.5 s ago with a max wait of 5 s.
    expect(error.retryAfter).toBe(3_500);
    void probe.catch(() => {});
  });

  it('retryAfter counts down with the clock, read at each access', async () => {
    const { clock, breaker, p } = make();
    breaker.trip();
    const error = (await p.execute(() => 'ok').catch((e: unknown) => e)) as BrokenCircuitError;
    expect(error.retryAfter).toBe(1000);
    clock.advance(250);
    expect(error.retryAfter).toBe(750);
    clock.advance(749);
    expect(error.retryAfter).toBe(1);
    clock.advance(1);
    expect(error.retryAfter).toBe(0);
    clock.advance(5000);
    expect(error.retryAfter).toBe(0);
  });

  it('retryAfter covers the grown break of a backed-off opening', async () => {
    const { clock, breaker, p } = make({ breakBackoff: { multiplier: 4 } });
    breaker.trip();
    clock.advance(1000);
    expect(breaker.state).toBe('half-open');
    expect(() =>
      p.executeSync(() => {
        throw new Error('probe failed');
      }),
    ).toThrow('probe failed');
    const error = (await p.execute(() => 'ok').catch((e: unknown) => e)) as BrokenCircuitError;
    expect(error.retryAfter).toBe(4000);
  });

  it('without debug, every refusal rejects with the same preallocated, stackless instance', async () => {
    const { clock, breaker, p } = make();
    breaker.trip();
    const a = await p.execute(() => 'ok').catch((e: unknown) => e);
    clock.advance(10);
    const b = await p.execute(() => 'ok').catch((e: unknown) => e);
    let c: unknown;
    try {
      p.executeSync(() => 'ok');
    } catch (e) {
      c = e;
    }
    const d = await p.tryExecute(() => 'ok');
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect((d as { error: unknown }).error).toBe(a);
    expect((a as Error).stack).not.toMatch(STACK_FRAME);
    expect((a as Error).stack).toBe('BrokenCircuitError: Circuit breaker "circuitBreaker" is open');
  });

  it('the shared instance follows later openings of the same breaker', async () => {
    const { clock, breaker, p } = make();
    breaker.trip();
    const error = (await p.execute(() => 'ok').catch((e: unknown) => e)) as BrokenCircuitError;
    clock.advance(2000);
    breaker.trip();
    expect(error.retryAfter).toBe(1000);
  });

  it('with debug: true, each refusal gets a fresh error with a stack trace', async () => {
    const { clock, breaker, p } = make({ debug: true });
    breaker.trip();
    const a = (await p.execute(() => 'ok').catch((e: unknown) => e)) as BrokenCircuitError;
    const b = (await p.execute(() => 'ok').catch((e: unknown) => e)) as BrokenCircuitError;
    expect(a).not.toBe(b);
    expect(a).toBeInstanceOf(BrokenCircuitError);
    expect(a.stack).toMatch(STACK_FRAME);
    expect(b.stack).toMatch(STACK_FRAME);
    expect(a.retryAfter).toBe(1000);
    clock.advance(300);
    expect(a.retryAfter).toBe(700);
  });

  it('with debug: true, isolated refusals are fresh IsolatedCircuitErrors', async () => {
    const { breaker, p } = make({ debug: true });
    breaker.isolate();
    const a = await p.execute(() => 'ok').catch((e: unknown) => e);
    const b = await p.execute(() => 'ok').catch((e: unknown) => e);
    expect(a).toBeInstanceOf(IsolatedCircuitError);
    expect(a).not.toBe(b);
    expect((a as Error).stack).toMatch(STACK_FRAME);
  });

  it('without debug, isolated refusals share one IsolatedCircuitError, distinct from the open one', async () => {
    const { breaker, p } = make();
    breaker.isolate();
    const a = await p.execute(() => 'ok').catch((e: unknown) => e);
    const b = await p.execute(() => 'ok').catch((e: unknown) => e);
    expect(a).toBe(b);
    breaker.trip();
    const open = await p.execute(() => 'ok').catch((e: unknown) => e);
    expect(open).not.toBe(a);
    expect(open).not.toBeInstanceOf(IsolatedCircuitError);
  });

  it('two breakers never share an error instance', async () => {
    const a = make({ name: 'a' });
    const b = make({ name: 'b' });
    a.breaker.trip();
    b.breaker.trip();
    const ea = await a.p.execute(() => 'ok').catch((e: unknown) => e);
    const eb = await b.p.execute(() => 'ok').catch((e: unknown) => e);
    expect(ea).not.toBe(eb);
    expect(eb).toMatchObject({ policyName: 'b' });
  });
});

describe('tryExecute on an open breaker', () => {
  it('resolves { ok: false, rejected: true } with the refusal', async () => {
    const { breaker, p } = make();
    breaker.trip();
    const result = await p.tryExecute(() => 'ok');
    expect(result.ok).toBe(false);
    expect(result).toMatchObject({ ok: false, rejected: true });
    expect((result as { error: unknown }).error).toBeInstanceOf(BrokenCircuitError);
  });

  it('returns the very same promise on repeated refusals', () => {
    const { breaker, p } = make();
    breaker.trip();
    const first = p.tryExecute(() => 'ok');
    const second = p.tryExecute(() => 'ok');
    const third = p.tryExecute(() => 'ok');
    expect(second).toBe(first);
    expect(third).toBe(first);
  });

  it('does not call the function', async () => {
    const { breaker, p } = make();
    breaker.trip();
    let calls = 0;
    await p.tryExecute(() => calls++);
    expect(calls).toBe(0);
  });

  it('a failure of the function itself resolves with rejected: false', async () => {
    const { p } = make();
    const boom = new Error('boom');
    const result = await p.tryExecute(() => Promise.reject(boom));
    expect(result).toEqual({ ok: false, error: boom, rejected: false });
  });

  it('an isolated breaker resolves rejected: true with the IsolatedCircuitError', async () => {
    const { breaker, p } = make();
    breaker.isolate();
    const result = await p.tryExecute(() => 'ok');
    expect(result).toMatchObject({ ok: false, rejected: true });
    expect((result as { error: unknown }).error).toBeInstanceOf(IsolatedCircuitError);
  });
});
