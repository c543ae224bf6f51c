/**
 * Deadlines on a clock that is costly to read (the system clock): a call's deadline starts at
 * the next tick of the policy's shared timer instead of a reading of its own, so it is never
 * early and at most one tick (timeout / 32, at least 1 ms) late.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { circuitBreaker, pipeline, TimeoutError, timeout } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { untilAborted } from '../../support/async.js';

/** A manual clock that counts readings and behaves like the system clock for policies. */
class CountingClock extends ManualClock {
  reads = 0;
  constructor() {
    super();
    this.cheapNow = false;
  }
  override now(): number {
    this.reads++;
    return super.now();
  }
}

describe('timeout deadlines on a clock that is costly to read', () => {
  it('calls that finish in time read the clock once per tick, not once each', async () => {
    const clock = new CountingClock();
    const p = pipeline(timeout({ timeout: 320, clock }));
    for (let i = 0; i < 1_000; i++) {
      expect(await p.execute(() => Promise.resolve(i))).toBe(i);
      if (i % 100 === 99) await clock.advanceAsync(1);
    }
    // The first call reads the clock and starts the timer; each tick reads it once.
    expect(clock.reads).toBeLessThanOrEqual(11);
  });

  it('property: a deadline passes no earlier than the timeout and at most one tick after it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2_000 }),
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 12 }),
        async (ms, gaps) => {
          const clock = new CountingClock();
          const p = pipeline(timeout({ timeout: ms, clock }));
          const tick = Math.max(1, ms / 32);
          const ended: { started: number; at: number; error: unknown }[] = [];
          const calls: Promise<void>[] = [];
          for (const gap of gaps) {
            await clock.advanceAsync(gap);
            const started = clock.now();
            calls.push(
              p.execute(untilAborted).catch((error: unknown) => {
                ended.push({ started, at: clock.now(), error });
              }),
            );
          }
          await clock.advanceAsync(ms + tick + 1);
          await Promise.all(calls);
          expect(ended).toHaveLength(gaps.length);
          for (const e of ended) {
            expect(e.error).toBeInstanceOf(TimeoutError);
            expect(e.at - e.started).toBeGreaterThanOrEqual(ms);
            expect(e.at - e.started).toBeLessThanOrEqual(ms + tick + 1e-9);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the timer stops at the first tick that finds no call waiting', async () => {
    const clock = new CountingClock();
    const policy = timeout({ timeout: 320, clock });
    const p = pipeline(policy);
    await p.execute(() => Promise.resolve(1));
    expect(clock.pendingTimers).toBe(1);
    await clock.advanceAsync(10);
    expect(clock.pendingTimers).toBe(0);
    expect(policy.pending).toBe(0);
  });

  it('a pipeline that reads the clock anyway gives the timeout its reading: deadlines are exact', async () => {
    const clock = new CountingClock();
    await clock.advanceAsync(5);
    const slowTimed = pipeline(
      timeout({ timeout: 320, clock }),
      // A slow-call threshold makes the pipeline time calls: one reading per call, shared.
      circuitBreaker({ clock, slowCallDuration: 1_000 }),
    );
    const started = clock.now();
    let at = Number.NaN;
    const call = slowTimed.execute(untilAborted).catch(() => {
      at = clock.now();
    });
    await clock.advanceAsync(5);
    // A second call keeps the timer ticking; the first call's deadline is still exact.
    void slowTimed.execute(() => Promise.resolve(1));
    await clock.advanceAsync(400);
    await call;
    expect(at - started).toBe(320);
  });
});
