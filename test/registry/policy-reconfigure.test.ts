/**
 * `reconfigure` on each policy (what the registry's reconfigure builds on): new settings for the
 * calls to come, state and permits kept, all-or-nothing validation.
 */
import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  CircuitBreaker,
  OptionsError,
  pipeline,
  Retry,
  Timeout,
  TimeoutError,
} from '../../src/index.js';
import { flushMicrotasks, ManualClock } from '../../src/testing/index.js';
import { deferred, track, untilAborted } from '../support/async.js';

const fail = () => {
  throw new Error('down');
};

/** Runs one failing (or succeeding) synchronous call through `breaker`; returns the outcome. */
function call(breaker: CircuitBreaker, ok: boolean): unknown {
  try {
    return pipeline(breaker).executeSync(ok ? () => 'ok' : fail);
  } catch (error) {
    return error;
  }
}

describe('CircuitBreaker.reconfigure', () => {
  it('an open breaker stays open until its current break ends; the new break applies to the next opening', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 1 },
      breakDuration: 1_000,
    });
    call(breaker, false);
    expect(breaker.state).toBe('open');
    const generation = breaker.generation;
    breaker.reconfigure({ window: { kind: 'consecutive', threshold: 1 }, breakDuration: 5_000 });
    expect(breaker.state).toBe('open');
    expect(breaker.generation).toBe(generation);
    expect(call(breaker, true)).toBeInstanceOf(BrokenCircuitError);
    clock.advance(1_000);
    expect(breaker.state).toBe('half-open');
    call(breaker, false);
    expect(breaker.state).toBe('open');
    clock.advance(4_999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });

  it('keeps the outcomes in a window of the same shape and judges them with the new thresholds', () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 5 } });
    for (let i = 0; i < 3; i++) call(breaker, false);
    expect(breaker.stats().failuresInWindow).toBe(3);
    breaker.reconfigure({ window: { kind: 'consecutive', threshold: 4 } });
    expect(breaker.stats().failuresInWindow).toBe(3);
    expect(breaker.state).toBe('closed');
    call(breaker, false);
    expect(breaker.state).toBe('open');
  });

  it('keeps a count window of the same size with new rate thresholds', () => {
    const breaker = new CircuitBreaker({
      window: { kind: 'count', size: 10 },
      failureRateThreshold: 0.9,
    });
    for (let i = 0; i < 6; i++) call(breaker, true);
    for (let i = 0; i < 3; i++) call(breaker, false);
    breaker.reconfigure({ window: { kind: 'count', size: 10 }, failureRateThreshold: 0.4 });
    expect(breaker.stats()).toMatchObject({ callsInWindow: 9, failuresInWindow: 3 });
    call(breaker, false);
    // 4 failures in 10 calls: 0.4 opens under the new threshold.
    expect(breaker.state).toBe('open');
  });

  it('starts a fresh window when its shape changes, keeping the state and generation', () => {
    const breaker = new CircuitBreaker({ window: { kind: 'count', size: 10 } });
    for (let i = 0; i < 4; i++) call(breaker, false);
    const generation = breaker.generation;
    breaker.reconfigure({ window: { kind: 'count', size: 20 } });
    expect(breaker.stats()).toMatchObject({ callsInWindow: 0, failuresInWindow: 0, failures: 4 });
    expect(breaker.generation).toBe(generation);
    breaker.reconfigure({ window: { kind: 'consecutive', threshold: 2 } });
    call(breaker, false);
    expect(breaker.state).toBe('closed');
    call(breaker, false);
    expect(breaker.state).toBe('open');
  });

  it('a call admitted before the change is recorded after it', async () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 3 } });
    const gate = deferred();
    const running = track(pipeline(breaker).execute(() => gate.promise));
    breaker.reconfigure({ window: { kind: 'consecutive', threshold: 1 } });
    gate.reject(new Error('down'));
    await flushMicrotasks();
    expect(running.settled).toBe(true);
    expect(breaker.state).toBe('open');
  });

  it('judges the probe outcomes of a half-open breaker against the new probe counts', () => {
    const clock = new ManualClock();
    const options = {
      clock,
      window: { kind: 'consecutive', threshold: 1 } as const,
      breakDuration: 100,
      halfOpen: { probes: 3, maxConcurrent: 3 },
    };
    const breaker = new CircuitBreaker(options);
    call(breaker, false);
    clock.advance(100);
    call(breaker, true);
    expect(breaker.state).toBe('half-open');
    breaker.reconfigure({ ...options, clock: undefined, halfOpen: { probes: 1 } });
    expect(breaker.state).toBe('closed');
  });

  it('cannot turn slow-call tracking on for a breaker built without it, but can turn it off', () => {
    const plain = new CircuitBreaker({ breakDuration: 100, clock: new ManualClock() });
    expect(() => plain.reconfigure({ slowCallDuration: 500, breakDuration: 7 })).toThrow(
      /Expected `slowCallDuration` to be unset: slow-call tracking cannot be turned on/,
    );
    // Nothing changed: the old break duration is still in force.
    plain.trip();
    expect((plain.toJSON() as { openRemaining: number }).openRemaining).toBe(100);

    const timed = new CircuitBreaker({ slowCallDuration: 500 });
    timed.reconfigure({});
    expect(timed.needsDuration).toBe(true);
  });

  it('keeps its name and clock when they are left out and refuses to change them', () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ name: 'payments', clock });
    breaker.reconfigure({ breakDuration: 10 });
    expect(breaker.name).toBe('payments');
    expect(breaker.clock).toBe(clock);
    breaker.reconfigure({ name: 'payments', clock });
    expect(() => breaker.reconfigure({ name: 'other' })).toThrow(
      /Expected `name` to be "payments" \(a breaker's name cannot change/,
    );
    expect(() => breaker.reconfigure({ clock: new ManualClock() })).toThrow(OptionsError);
    expect(() => breaker.reconfigure({ initialState: breaker.toJSON() })).toThrow(/initialState/);
  });

  it('changes nothing when an option is invalid', () => {
    const breaker = new CircuitBreaker({ window: { kind: 'consecutive', threshold: 2 } });
    call(breaker, false);
    expect(() =>
      breaker.reconfigure({ window: { kind: 'consecutive', threshold: 1 }, breakDuration: -1 }),
    ).toThrow(/breakDuration/);
    expect(breaker.stats().failuresInWindow).toBe(1);
    expect(breaker.state).toBe('closed');
    call(breaker, false);
    expect(breaker.state).toBe('open');
  });

  it('never changes the caller object', () => {
    const options = Object.freeze({ breakDuration: 10 });
    const breaker = new CircuitBreaker({ name: 'x' });
    breaker.reconfigure(options);
    expect(options).toEqual({ breakDuration: 10 });
  });
});

describe('Bulkhead.reconfigure', () => {
  it('keeps the permits in flight: a lower limit admits nobody until enough calls end', async () => {
    const bulkhead = new Bulkhead({ maxConcurrent: 2 });
    const p = pipeline(bulkhead);
    const a = deferred();
    const b = deferred();
    const ra = p.execute(() => a.promise);
    const rb = p.execute(() => b.promise);
    expect(bulkhead.inFlight).toBe(2);
    bulkhead.reconfigure(1);
    expect(bulkhead.inFlight).toBe(2);
    expect(bulkhead.maxConcurrent).toBe(1);
    const refused = await p.execute(() => 'x').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BulkheadRejectedError);
    expect((refused as BulkheadRejectedError).maxConcurrent).toBe(1);
    a.resolve(1);
    await ra;
    expect(bulkhead.inFlight).toBe(1);
    await expect(p.execute(() => 'y')).rejects.toBeInstanceOf(BulkheadRejectedError);
    b.resolve(2);
    await rb;
    await expect(p.execute(() => 'z')).resolves.toBe('z');
  });

  it('a higher limit admits queued calls at once, in order', async () => {
    const bulkhead = new Bulkhead({ maxConcurrent: 1, maxQueue: 5 });
    const p = pipeline(bulkhead);
    const gate = deferred();
    const order: number[] = [];
    const first = p.execute(() => gate.promise);
    const queued = [1, 2, 3].map((n) => p.execute(() => order.push(n)));
    expect(bulkhead.queueLength).toBe(3);
    bulkhead.reconfigure({ maxConcurrent: 3, maxQueue: 5 });
    expect(bulkhead.queueLength).toBe(1);
    expect(bulkhead.inFlight).toBe(3);
    await Promise.all(queued);
    expect(order).toEqual([1, 2, 3]);
    expect(bulkhead.inFlight).toBe(1);
    gate.resolve(0);
    await first;
  });

  it('a shorter queue timeout applies to calls already queued, counted from the change', async () => {
    const clock = new ManualClock();
    const bulkhead = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, queueTimeout: 10_000, clock });
    const p = pipeline(bulkhead);
    const gate = deferred();
    void p.execute(() => gate.promise);
    const early = track(p.execute(() => 'early'));
    clock.advance(1_000);
    bulkhead.reconfigure({ maxConcurrent: 1, maxQueue: 5, queueTimeout: 500 });
    const late = track(p.execute(() => 'late'));
    await clock.advanceAsync(499);
    expect(early.settled).toBe(false);
    await clock.advanceAsync(1);
    expect(early.settled).toBe(true);
    expect((early.error as BulkheadRejectedError).reason).toBe('queue-timeout');
    expect(late.settled).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    gate.resolve(1);
  });

  it('a longer queue timeout applies to calls queued from then on', async () => {
    const clock = new ManualClock();
    const bulkhead = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, queueTimeout: 100, clock });
    const p = pipeline(bulkhead);
    const gate = deferred();
    void p.execute(() => gate.promise);
    const before = track(p.execute(() => 1));
    bulkhead.reconfigure({ maxConcurrent: 1, maxQueue: 5, queueTimeout: 1_000 });
    const after = track(p.execute(() => 2));
    await clock.advanceAsync(100);
    expect(before.settled).toBe(true);
    expect(after.settled).toBe(false);
    await clock.advanceAsync(900);
    expect(after.settled).toBe(true);
    gate.resolve(1);
  });

  it('an unlimited queue timeout stops expiring queued calls; a limited one starts again', async () => {
    const clock = new ManualClock();
    const bulkhead = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, queueTimeout: 100, clock });
    const p = pipeline(bulkhead);
    const gate = deferred();
    void p.execute(() => gate.promise);
    bulkhead.reconfigure({ maxConcurrent: 1, maxQueue: 5, queueTimeout: Number.POSITIVE_INFINITY });
    const waiting = track(p.execute(() => 1));
    await clock.advanceAsync(10_000);
    expect(waiting.settled).toBe(false);
    bulkhead.reconfigure({ maxConcurrent: 1, maxQueue: 5, queueTimeout: 50 });
    await clock.advanceAsync(50);
    expect(waiting.settled).toBe(true);
    expect((waiting.error as BulkheadRejectedError).reason).toBe('queue-timeout');
    gate.resolve(1);
  });

  it('cannot give a queue to a bulkhead built without one, and then changes nothing', () => {
    const bulkhead = new Bulkhead({ maxConcurrent: 2 });
    expect(() => bulkhead.reconfigure({ maxConcurrent: 5, maxQueue: 3 })).toThrow(
      /Expected `maxQueue` to be 0: a bulkhead built without a queue cannot be given one/,
    );
    expect(bulkhead.maxConcurrent).toBe(2);
    const queued = new Bulkhead({ maxConcurrent: 2, maxQueue: 3 });
    queued.reconfigure({ maxConcurrent: 2, maxQueue: 0 });
    expect(queued.mayWait).toBe(true);
  });
});

describe('Timeout.reconfigure', () => {
  it('a shorter timeout applies to new calls; calls in flight keep their deadline', async () => {
    const clock = new ManualClock();
    const policy = new Timeout({ timeout: 1_000, clock });
    const p = pipeline(policy);
    const old = track(p.execute(untilAborted));
    clock.advance(100);
    policy.reconfigure(200);
    expect(policy.timeout).toBe(200);
    const fresh = track(p.execute(untilAborted));
    await clock.advanceAsync(200);
    expect(fresh.settled).toBe(true);
    expect((fresh.error as TimeoutError).timeout).toBe(200);
    expect(old.settled).toBe(false);
    await clock.advanceAsync(699);
    expect(old.settled).toBe(false);
    await clock.advanceAsync(1);
    expect(old.settled).toBe(true);
    expect(old.error).toBeInstanceOf(TimeoutError);
    expect(clock.pendingTimers).toBe(0);
    expect(policy.pending).toBe(0);
  });

  it('a longer timeout applies to new calls; calls in flight keep their deadline', async () => {
    const clock = new ManualClock();
    const policy = new Timeout({ timeout: 100, clock });
    const p = pipeline(policy);
    const old = track(p.execute(untilAborted));
    policy.reconfigure({ timeout: 1_000 });
    const fresh = track(p.execute(untilAborted));
    await clock.advanceAsync(100);
    expect(old.settled).toBe(true);
    expect(fresh.settled).toBe(false);
    await clock.advanceAsync(900);
    expect(fresh.settled).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('calls that finish before their old deadline are not timed out after a change', async () => {
    const clock = new ManualClock();
    const policy = new Timeout({ timeout: 1_000, clock });
    const p = pipeline(policy);
    const gate = deferred();
    const old = p.execute(() => gate.promise);
    policy.reconfigure(10);
    gate.resolve('done');
    await expect(old).resolves.toBe('done');
    await clock.advanceAsync(2_000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('keeps its strategy: a change of strategy is refused and changes nothing', () => {
    const policy = new Timeout({ timeout: 100, strategy: 'aggressive' });
    policy.reconfigure(50);
    expect(policy.aggressive).toBe(true);
    expect(() => policy.reconfigure({ timeout: 20, strategy: 'cooperative' })).toThrow(
      /Expected `strategy` to be "aggressive"/,
    );
    expect(() => policy.reconfigure({ timeout: 20 })).toThrow(OptionsError);
    expect(policy.timeout).toBe(50);
  });

  it('dispose forgets the deadlines of calls started before a change too', async () => {
    const clock = new ManualClock();
    const policy = new Timeout({ timeout: 1_000, clock });
    void pipeline(policy).execute(() => new Promise(() => {}));
    policy.reconfigure(10);
    void pipeline(policy).execute(() => new Promise(() => {}));
    expect(policy.pending).toBe(2);
    policy.dispose();
    expect(policy.pending).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('Retry.reconfigure', () => {
  it('applies new settings to the next decision of executions already running', async () => {
    const clock = new ManualClock();
    const retry = new Retry({
      maxAttempts: 10,
      delay: 100,
      jitter: 'none',
      backoff: 'constant',
      clock,
    });
    let attempts = 0;
    const running = track(
      pipeline(retry).execute(() => {
        attempts++;
        throw new Error('down');
      }),
    );
    await clock.advanceAsync(0);
    expect(attempts).toBe(1);
    retry.reconfigure({ maxAttempts: 2, delay: 100, jitter: 'none', backoff: 'constant' });
    await clock.advanceAsync(100);
    expect(attempts).toBe(2);
    expect(running.settled).toBe(true);
  });

  it('cannot be given a maxDuration when built without one, and then changes nothing', () => {
    const retry = new Retry({ maxAttempts: 4 });
    expect(() => retry.reconfigure({ maxAttempts: 2, maxDuration: 1_000 })).toThrow(
      /Expected `maxDuration` to be Infinity/,
    );
    expect(retry.o.maxAttempts).toBe(4);
    const bounded = new Retry({ maxDuration: 1_000 });
    bounded.reconfigure({});
    expect(bounded.o.maxDuration).toBe(Number.POSITIVE_INFINITY);
  });
});
