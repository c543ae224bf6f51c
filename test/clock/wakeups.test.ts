import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Wakeups } from '../../src/clock/Wakeups.js';
import { ManualClock } from '../../src/testing/index.js';

describe('Wakeups', () => {
  it('wakes every sleeper at its time, in time order, with at most one timer pending', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 1_000 })), {
          minLength: 1,
          maxLength: 60,
        }),
        (plan) => {
          const clock = new ManualClock();
          const wakeups = Wakeups.of(clock);
          const woken: { at: number; when: number }[] = [];
          // Each entry: schedule at `start` (time of scheduling) for `start + delay`.
          const sorted = [...plan].sort((a, b) => a[0] - b[0]);
          for (const [start, delay] of sorted) {
            clock.advance(start - clock.now());
            const at = start + delay;
            wakeups.schedule(at, clock.now(), {
              wake: () => woken.push({ at, when: clock.now() }),
            });
            expect(clock.pendingTimers).toBeLessThanOrEqual(1);
          }
          clock.advance(2_000);
          expect(woken).toHaveLength(plan.length);
          for (const w of woken) expect(w.when).toBe(w.at);
          const ats = woken.map((w) => w.at);
          expect(ats).toEqual([...ats].sort((a, b) => a - b));
          expect(wakeups.size).toBe(0);
          expect(clock.pendingTimers).toBe(0);
        },
      ),
    );
  });

  it('a sleeper scheduling again from its wake is woken again at the new time', () => {
    const clock = new ManualClock();
    const times: number[] = [];
    const sleeper = {
      wake: () => {
        times.push(clock.now());
        if (times.length < 3) Wakeups.of(clock).schedule(clock.now() + 10, clock.now(), sleeper);
      },
    };
    Wakeups.of(clock).schedule(10, 0, sleeper);
    clock.advance(100);
    expect(times).toEqual([10, 20, 30]);
  });

  it('one instance per clock', () => {
    const a = new ManualClock();
    const b = new ManualClock();
    expect(Wakeups.of(a)).toBe(Wakeups.of(a));
    expect(Wakeups.of(a)).not.toBe(Wakeups.of(b));
  });
});
