/**
 * The two hooks shared signals use on a local breaker (ManualClock): holding it open until a
 * given time, and the probe gate asked before each half-open probe. Neither lets through a
 * call the breaker alone would refuse.
 */
import { describe, expect, it } from 'vitest';
import {
  holdOpen,
  type ProbeGate,
  setProbeGate,
} from '../../../src/policies/circuit-breaker/shared.js';
import { fail, refusal, succeed, watchedBreaker } from '../../support/breaker.js';

const options = { window: { kind: 'consecutive', threshold: 1 }, breakDuration: 1_000 } as const;

describe('holdOpen', () => {
  it('opens a closed breaker until the time given (reason shared-open), then it goes half-open as after any break', () => {
    const { breaker, clock, p, events } = watchedBreaker(options);
    expect(holdOpen(breaker, 5_000)).toBe(true);
    expect(events.map((e) => [e.to, e.reason, e.breakDuration])).toEqual([
      ['open', 'shared-open', 5_000],
    ]);
    clock.advance(4_999);
    refusal(p);
    clock.advance(1);
    succeed(p);
    expect(breaker.state).toBe('closed');
  });

  it('lengthens a break, never shortens it, and counts no opening for the backoff', () => {
    const { breaker, clock, p, events } = watchedBreaker({
      ...options,
      breakBackoff: { multiplier: 2, maxDuration: 60_000 },
    });
    fail(p);
    expect(holdOpen(breaker, 500)).toBe(false);
    clock.advance(999);
    expect(breaker.state).toBe('open');
    expect(holdOpen(breaker, 3_000)).toBe(false);
    clock.advance(1_000);
    expect(breaker.state).toBe('open');
    clock.advance(1_001);
    expect(breaker.state).toBe('half-open');
    expect(events.filter((e) => e.to === 'open')).toHaveLength(1);
    fail(p);
    // The second break of the backoff: 2 s, as if the shared hold had not happened.
    expect(events.at(-1)!.breakDuration).toBe(2_000);
  });

  it('leaves disabled, metrics-only and forced-open breakers alone; a time already past does nothing', () => {
    for (const set of ['disable', 'metricsOnly', 'forceOpen'] as const) {
      const { breaker, clock } = watchedBreaker(options);
      breaker[set]();
      const before = breaker.state;
      expect(holdOpen(breaker, clock.now() + 1_000)).toBe(false);
      expect(breaker.state).toBe(before);
    }
    const { breaker } = watchedBreaker(options);
    expect(holdOpen(breaker, 0)).toBe(false);
    expect(breaker.state).toBe('closed');
  });

  it('opens a half-open breaker under a new generation: its probe in flight no longer counts', async () => {
    const { breaker, clock, p } = watchedBreaker(options);
    fail(p);
    clock.advance(1_000);
    let finish: () => void = () => {};
    const probe = p.execute(() => new Promise<void>((r) => (finish = r)));
    expect(breaker.state).toBe('half-open');
    holdOpen(breaker, clock.now() + 2_000);
    finish();
    await probe;
    expect(breaker.state).toBe('open');
  });
});

describe('the probe gate', () => {
  it('is asked only for half-open probes the breaker has room for; false refuses the call', () => {
    const { breaker, clock, p } = watchedBreaker(options);
    const asked: number[] = [];
    let answer = false;
    const gate: ProbeGate = {
      mayProbe(now) {
        asked.push(now);
        return answer;
      },
    };
    setProbeGate(breaker, gate);
    succeed(p, 3);
    fail(p);
    refusal(p);
    expect(asked).toEqual([]);
    clock.advance(1_000);
    refusal(p);
    refusal(p);
    expect(asked).toEqual([1_000, 1_000]);
    answer = true;
    succeed(p);
    expect(breaker.state).toBe('closed');
    expect(asked).toHaveLength(3);
  });
});
