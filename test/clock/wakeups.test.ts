import { setImmediate as turn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { Wakeups } from '../../src/clock/Wakeups.js';
import { ManualClock } from '../../src/testing/index.js';
import { buildLibrary, root } from '../support/build.js';
import { runNodeScript } from '../support/child.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

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

/** A full garbage collection, as `--expose-gc` gives (the way jest's leak detector gets it). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('sleepers held weakly', () => {
  it('are woken at their time like the others', () => {
    const clock = new ManualClock();
    const woken: string[] = [];
    const weak = { wake: () => woken.push(`weak@${clock.now()}`) };
    const strong = { wake: () => woken.push(`strong@${clock.now()}`) };
    Wakeups.of(clock).schedule(20, 0, new WeakRef(weak));
    Wakeups.of(clock).schedule(10, 0, strong);
    clock.advance(100);
    expect(woken).toEqual(['strong@10', 'weak@20']);
  });

  it('are not kept alive by the heap: once collected, their entries are dropped as the heap grows, and the live ones still wake in order', async () => {
    const clock = new ManualClock();
    const wakeups = Wakeups.of(clock);
    (() => {
      for (let i = 0; i < 3_000; i++) wakeups.schedule(1_000 + i, 0, new WeakRef({ wake() {} }));
    })();
    // Weak references let go of their targets once the job that made them has ended.
    await turn();
    collectGarbage();
    const woken: number[] = [];
    const kept: { wake(): void }[] = [];
    const before = wakeups.size;
    for (let i = 0; wakeups.size >= before && i < 4_096; i++) {
      const sleeper = { wake: () => woken.push(clock.now()) };
      kept.push(sleeper);
      wakeups.schedule(5_000 - i, 0, new WeakRef(sleeper));
    }
    expect(wakeups.size).toBe(kept.length);
    clock.advance(10_000);
    expect(woken).toHaveLength(kept.length);
    expect(woken).toEqual([...woken].sort((a, b) => a - b));
    expect(wakeups.size).toBe(0);
  });

  it('sleepers held strongly are never dropped, however many wait', () => {
    const clock = new ManualClock();
    const wakeups = Wakeups.of(clock);
    const woken: number[] = [];
    for (let i = 0; i < 5_000; i++) {
      wakeups.schedule((i * 7919) % 5_000, 0, { wake: () => woken.push(clock.now()) });
    }
    clock.advance(5_000);
    expect(woken).toHaveLength(5_000);
    expect(woken).toEqual([...woken].sort((a, b) => a - b));
  });
});

describe('breakers waiting on the shared heap', () => {
  let library = '';
  beforeAll(async () => {
    library = await buildLibrary('wakeups');
  }, 60_000);

  it('20,000 opened breakers that nothing else references are collected while their breaks run, and the heap keeps next to nothing of them', async () => {
    const exit = await runNodeScript(
      `${fixtures}dropped-breakers.mjs`,
      [library, 20_000],
      root,
      60_000,
      { nodeOptions: ['--expose-gc'] },
    );
    expect(exit.stderr).toBe('');
    expect(exit).toMatchObject({ code: 0, killed: false });
    const result = JSON.parse(exit.stdout) as {
      count: number;
      refused: number;
      sampled: number;
      alive: number;
      bytesPerBreaker: number;
    };
    expect(result).toMatchObject({ count: 20_000, refused: 20_000, sampled: 200, alive: 0 });
    // An opened breaker held by the heap costs about 2 kB; what is left of one is a few numbers
    // at most.
    expect(result.bytesPerBreaker).toBeLessThan(200);
  }, 90_000);
});
