import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  Bulkhead,
  BulkheadRejectedError,
  type CircuitBreakerOptions,
  type CircuitRejectedEvent,
  type Pipeline,
  pipeline,
  type StateChangeEvent,
} from '../../../src/index.js';
import type { ManualClock } from '../../../src/testing/index.js';
import { fail, pending, refusal, succeed, watchedBreaker } from '../../support/breaker.js';

/** A breaker tripped at t=0 with a 1000 ms break, so that it is half-open from t=1000. */
function tripped(options: CircuitBreakerOptions = {}) {
  const made = watchedBreaker({ breakDuration: 1000, ...options });
  made.breaker.trip();
  return made;
}

const refused = (p: Pipeline) => expect(refusal(p)).toBeInstanceOf(BrokenCircuitError);

describe('open to half-open', () => {
  it('becomes half-open when the break has passed, noticed on the next read', () => {
    const { clock, breaker, events } = tripped();
    clock.advance(5000);
    expect(events).toHaveLength(1);
    expect(breaker.state).toBe('half-open');
    expect(events[1]).toMatchObject({
      from: 'open',
      to: 'half-open',
      reason: 'break-elapsed',
      generation: 2,
      breakDuration: 0,
      callsInWindow: 0,
    });
    expect(events[1]?.failureRate).toBeNaN();
  });

  it('becomes half-open on the next call, which is admitted as a probe', () => {
    const { clock, breaker, p, events } = tripped();
    clock.advance(1000);
    succeed(p);
    expect(events.map((e) => e.to)).toEqual(['open', 'half-open', 'closed']);
    expect(breaker.state).toBe('closed');
  });
});

describe('probes', () => {
  it('admits `probes` probes in a period and refuses calls beyond them', async () => {
    const { clock, breaker, p } = tripped({ halfOpen: { probes: 3, maxConcurrent: 3 } });
    clock.advance(1000);
    const probes = [pending(p), pending(p), pending(p)];
    expect(probes.map((c) => c.admitted)).toEqual([true, true, true]);
    expect(breaker.stats().probesInFlight).toBe(3);
    refused(p);
    await probes[0]!.succeed();
    // Three probes were started in this period; a finished one does not free a new one.
    refused(p);
    await probes[1]!.succeed();
    expect(breaker.state).toBe('half-open');
    await probes[2]!.succeed();
    expect(breaker.state).toBe('closed');
  });

  it('runs at most maxConcurrent probes at once', async () => {
    const { clock, breaker, p } = tripped({ halfOpen: { probes: 3, maxConcurrent: 2 } });
    clock.advance(1000);
    const a = pending(p);
    const b = pending(p);
    expect([a.admitted, b.admitted]).toEqual([true, true]);
    refused(p);
    await a.succeed();
    const c = pending(p);
    expect(c.admitted).toBe(true);
    expect(breaker.stats().probesInFlight).toBe(2);
    await b.succeed();
    await c.succeed();
    expect(breaker.state).toBe('closed');
  });

  it('refuses with a half-open error and reports state half-open while probe slots are taken', () => {
    const { clock, breaker, p } = tripped();
    const rejected: CircuitRejectedEvent[] = [];
    breaker.onRejected((e) => rejected.push(e));
    clock.advance(1000);
    pending(p);
    const error = refusal(p);
    expect(error).toBeInstanceOf(BrokenCircuitError);
    // The probe must decide within halfOpen.maxWait (60 s by default).
    expect((error as BrokenCircuitError).retryAfter).toBe(60_000);
    expect(rejected).toEqual([{ error, state: 'half-open' }]);
  });

  it('closes once ceil(probes * successRatio) probes succeeded, without waiting for the rest', async () => {
    const { clock, breaker, p, events } = tripped({
      halfOpen: { probes: 4, maxConcurrent: 4, successRatio: 0.5 },
    });
    clock.advance(1000);
    const calls = [pending(p), pending(p), pending(p), pending(p)];
    await calls[0]!.fail();
    await calls[1]!.succeed();
    expect(breaker.state).toBe('half-open');
    await calls[2]!.succeed();
    expect(breaker.state).toBe('closed');
    expect(events.at(-1)).toMatchObject({
      from: 'half-open',
      to: 'closed',
      reason: 'probes-succeeded',
    });
    // The last probe belongs to the finished half-open period.
    await calls[3]!.fail();
    expect(breaker.state).toBe('closed');
    expect(breaker.stats().callsInWindow).toBe(0);
  });

  it('rounds the needed successes up: 3 probes at 0.5 need 2', () => {
    const { clock, breaker, p } = tripped({ halfOpen: { probes: 3, successRatio: 0.5 } });
    clock.advance(1000);
    succeed(p);
    expect(breaker.state).toBe('half-open');
    fail(p);
    expect(breaker.state).toBe('half-open');
    succeed(p);
    expect(breaker.state).toBe('closed');
  });

  it('re-opens as soon as failures exceed probes - needed', () => {
    const { clock, breaker, p, events } = tripped({ halfOpen: { probes: 4, successRatio: 0.5 } });
    clock.advance(1000);
    fail(p);
    fail(p);
    expect(breaker.state).toBe('half-open');
    fail(p); // 3 > 4 - 2: two successes can no longer happen
    expect(breaker.state).toBe('open');
    expect(events.at(-1)).toMatchObject({
      from: 'half-open',
      to: 'open',
      reason: 'probes-failed',
      breakDuration: 1000,
    });
    // The new open period starts when the probe failed.
    clock.advance(999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });

  it('with successRatio 1 the first failed probe re-opens it', () => {
    const { clock, breaker, p } = tripped({ halfOpen: { probes: 5, successRatio: 1 } });
    clock.advance(1000);
    succeed(p);
    succeed(p);
    fail(p);
    expect(breaker.state).toBe('open');
  });

  it('a slow probe counts as failed', async () => {
    const { clock, breaker, p } = tripped({ slowCallDuration: 100 });
    clock.advance(1000);
    const probe = p.execute(
      () => new Promise((resolve) => clock.setTimer(() => resolve('ok'), 100)),
    );
    clock.advance(100);
    await expect(probe).resolves.toBe('ok');
    expect(breaker.state).toBe('open');
  });

  it('a probe just under slowCallDuration counts as succeeded', async () => {
    const { clock, breaker, p } = tripped({ slowCallDuration: 100 });
    clock.advance(1000);
    const probe = p.execute(
      () => new Promise((resolve) => clock.setTimer(() => resolve('ok'), 99)),
    );
    clock.advance(99);
    await probe;
    expect(breaker.state).toBe('closed');
  });

  it('a probe refused by an inner bulkhead gives its slot back', async () => {
    const { clock, breaker } = tripped();
    const bulkhead = new Bulkhead({ maxConcurrent: 1, clock });
    const guarded = pipeline(breaker, bulkhead);
    // Fill the bulkhead from another pipeline that does not go through the breaker.
    let release!: () => void;
    const holder = pipeline(bulkhead).execute(() => new Promise<void>((r) => (release = r)));
    clock.advance(1000);
    const first = await guarded.tryExecute(() => 'ok');
    expect(first).toMatchObject({ ok: false, rejected: true });
    expect((first as { error: unknown }).error).toBeInstanceOf(BulkheadRejectedError);
    expect(breaker.stats()).toMatchObject({ state: 'half-open', probesInFlight: 0, ignored: 1 });
    release();
    await holder;
    // The slot is free again: the next call is the probe, and it closes the breaker.
    await expect(guarded.execute(() => 'ok')).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
  });

  it('a failed probe never closes the breaker, however small successRatio is', () => {
    const { clock, breaker, p } = tripped({ halfOpen: { successRatio: 1e-10 } });
    clock.advance(1000);
    fail(p);
    expect(breaker.state).toBe('open');
  });
});

describe('half-open maxWait', () => {
  it('re-opens when maxWait has passed since half-open began, with a hanging probe', () => {
    const { clock, breaker, p, events } = tripped({ halfOpen: { maxWait: 500 } });
    clock.advance(1000);
    pending(p);
    clock.advance(499);
    expect(breaker.state).toBe('half-open');
    clock.advance(1);
    expect(breaker.state).toBe('open');
    expect(events.at(-1)).toMatchObject({
      from: 'half-open',
      to: 'open',
      reason: 'half-open-timeout',
      breakDuration: 1000,
    });
  });

  it('counts maxWait from the first probe, not from the end of the break', () => {
    const { clock, breaker, p } = tripped({ halfOpen: { maxWait: 500 } });
    clock.advance(1400); // half-open since t=1000, nobody called
    expect(breaker.state).toBe('half-open');
    pending(p); // the first probe, at t=1400
    clock.advance(499); // t = 1899
    expect(breaker.state).toBe('half-open');
    clock.advance(1); // t = 1900 = 1400 + maxWait
    expect(breaker.state).toBe('open');
  });

  it('a half-open breaker that admitted no probe never times out', () => {
    const { clock, breaker, events } = tripped({ halfOpen: { maxWait: 500 } });
    clock.advance(1000 + 500 * 1000);
    expect(breaker.state).toBe('half-open');
    expect(events.at(-1)?.reason).toBe('break-elapsed');
  });

  it('computes the re-opening lazily from the deadline: the new break started at the deadline', async () => {
    const { clock, breaker, p } = tripped({ halfOpen: { maxWait: 500 } });
    clock.advance(1000);
    pending(p);
    clock.advance(800); // deadline was t=1500; now t=1800
    const error = await p.execute(() => 'ok').catch((e: unknown) => e);
    expect(breaker.state).toBe('open');
    expect((error as BrokenCircuitError).retryAfter).toBe(700);
    clock.advance(700);
    expect(breaker.state).toBe('half-open');
  });

  it('catches up over a missed max wait and the break after it in one read, emitting each transition', () => {
    const { clock, breaker, p, events } = tripped({ halfOpen: { maxWait: 500 } });
    clock.advance(1000);
    pending(p);
    clock.advance(500 + 1000); // re-open at 1500, half-open at 2500
    expect(breaker.state).toBe('half-open');
    expect(events.map((e) => `${e.from}->${e.to}:${e.reason}`)).toEqual([
      'closed->open:manual',
      'open->half-open:break-elapsed',
      'half-open->open:half-open-timeout',
      'open->half-open:break-elapsed',
    ]);
    expect(events.map((e) => e.generation)).toEqual([1, 2, 3, 4]);
  });

  it('a probe that ends after maxWait no longer counts', async () => {
    const { clock, breaker, p, events } = tripped({ halfOpen: { maxWait: 500 } });
    clock.advance(1000);
    const probe = pending(p);
    clock.advance(600);
    await probe.succeed();
    expect(breaker.state).toBe('open');
    expect(events.at(-1)?.reason).toBe('half-open-timeout');
  });
});

describe('break backoff', () => {
  function failProbe(clock: ManualClock, p: Pipeline, events: StateChangeEvent[]): void {
    clock.advance(events.at(-1)!.breakDuration);
    fail(p);
  }

  it('multiplies the break by `multiplier` per consecutive opening, up to maxDuration', () => {
    const { clock, p, events } = tripped({ breakBackoff: { multiplier: 3, maxDuration: 20_000 } });
    for (let i = 0; i < 4; i++) failProbe(clock, p, events);
    expect(events.filter((e) => e.to === 'open').map((e) => e.breakDuration)).toEqual([
      1000, 3000, 9000, 20_000, 20_000,
    ]);
  });

  it('keeps the breaker open for the grown duration', () => {
    const { clock, breaker, p, events } = tripped({ breakBackoff: {} });
    failProbe(clock, p, events); // second opening: 2000 ms
    clock.advance(1999);
    expect(breaker.state).toBe('open');
    clock.advance(1);
    expect(breaker.state).toBe('half-open');
  });

  it('grows on re-openings after maxWait too', () => {
    const { clock, breaker, p, events } = tripped({
      breakBackoff: {},
      halfOpen: { maxWait: 100 },
    });
    clock.advance(1000);
    pending(p);
    clock.advance(100);
    expect(breaker.state).toBe('open');
    expect(events.at(-1)?.breakDuration).toBe(2000);
  });

  it('starts over from breakDuration once the breaker has stayed closed long enough', () => {
    const { clock, breaker, p, events } = tripped({ breakBackoff: {} });
    failProbe(clock, p, events);
    failProbe(clock, p, events); // 4000 ms
    clock.advance(4000);
    succeed(p);
    expect(breaker.state).toBe('closed');
    clock.advance(3 * 1000); // three steps of decay, one per breakDuration closed
    breaker.trip();
    expect(events.at(-1)?.breakDuration).toBe(1000);
  });

  it('starts over after reset()', () => {
    const { clock, breaker, p, events } = tripped({ breakBackoff: {} });
    failProbe(clock, p, events);
    breaker.reset();
    breaker.trip();
    expect(events.at(-1)?.breakDuration).toBe(1000);
  });
});
