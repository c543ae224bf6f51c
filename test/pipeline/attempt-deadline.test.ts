/**
 * The deadline a function reads (`ctx.deadline`, `ctx.timeLeft`) is the earliest one that will
 * really stop it: the call's own `timeout` and every timeout policy around it, per attempt for
 * a timeout inside a retry or a hedge.
 */
import { describe, expect, it } from 'vitest';
import { type ExecutionContext, hedge, pipeline, retry, timeout } from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { track, untilAborted } from '../support/async.js';

type Reading = [attempt: number, deadline: number, timeLeft: number];

function read(ctx: ExecutionContext): Reading {
  return [ctx.attempt, ctx.deadline, ctx.timeLeft];
}

describe('the deadline a function reads', () => {
  it("is an outer timeout policy's when the call has no timeout of its own", async () => {
    const clock = new ManualClock();
    clock.advance(5_000);
    const p = pipeline(timeout({ clock, timeout: 1_000 }));
    expect(await p.execute(read)).toEqual([1, 6_000, 1_000]);
  });

  it("is the timeout policy's when it falls before the call's own", async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ clock, timeout: 300 }));
    let seen: Reading | undefined;
    const call = track(
      p.execute(
        (ctx) => {
          seen = read(ctx);
          return untilAborted(ctx);
        },
        { timeout: 1_500 },
      ),
      clock,
    );
    await clock.advanceAsync(300);
    await call.done;
    expect(seen).toEqual([1, 300, 300]);
    expect(call.at).toBe(300);
  });

  it("is the call's own when it falls before the timeout policy's", async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ clock, timeout: 300 }));
    expect(await p.execute(read, { timeout: 120 })).toEqual([1, 120, 120]);
  });

  it('counts down as the function runs, and 0 once a deadline passed', async () => {
    const clock = new ManualClock();
    const p = pipeline(timeout({ clock, timeout: 100 }));
    const left: number[] = [];
    const call = p.execute(async (ctx) => {
      left.push(ctx.timeLeft);
      await new Promise<void>((resolve) => clock.setTimer(resolve, 40));
      left.push(ctx.timeLeft);
      await new Promise<void>((resolve) => clock.setTimer(resolve, 100));
      left.push(ctx.timeLeft);
    });
    await clock.advanceAsync(200);
    await call.catch(() => undefined);
    expect(left).toEqual([100, 60, 0]);
  });

  it('is per attempt for a timeout inside a retry, bounded by the timeout outside it', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      timeout({ clock, timeout: 250 }),
      retry({ clock, maxAttempts: 3, delay: 10, backoff: 'constant', jitter: 'none' }),
      timeout({ clock, timeout: 100 }),
    );
    const seen: Reading[] = [];
    const call = p.execute((ctx) => {
      seen.push(read(ctx));
      return untilAborted(ctx);
    });
    await clock.advanceAsync(300);
    await call.catch(() => undefined);
    // Attempts start at 0, 110 and 220: the last is bounded by the outer 250.
    expect(seen).toEqual([
      [1, 100, 100],
      [2, 210, 100],
      [3, 250, 30],
    ]);
  });

  it('is the earliest around each attempt of a hedge', async () => {
    const clock = new ManualClock();
    const p = pipeline(
      timeout({ clock, timeout: 500 }),
      hedge({ clock, maxHedges: 1, delay: 100 }),
      timeout({ clock, timeout: 450 }),
    );
    const seen: [number, number, number][] = [];
    const call = p.execute((ctx) => {
      seen.push([ctx.hedge, ctx.deadline, ctx.timeLeft]);
      return untilAborted(ctx);
    });
    await clock.advanceAsync(600);
    await call.catch(() => undefined);
    // The first attempt's own timeout ends at 450; the hedge's (started at 100) at the outer 500.
    expect(seen).toEqual([
      [0, 450, 450],
      [1, 500, 400],
    ]);
  });

  it("on the system clock, where a timeout starts deadlines at its timer's ticks, is never later than the timeout allows", async () => {
    const p = pipeline(timeout(60_000));
    let bounds: [number, number] = [0, 0];
    const left = await p.execute((ctx) => {
      const deadline = ctx.deadline;
      bounds = [performance.now(), deadline];
      return ctx.timeLeft;
    });
    const [readAt, deadline] = bounds;
    // Fixed at the read, at most the whole timeout from then; a stalled machine only shortens it.
    expect(deadline).toBeLessThanOrEqual(readAt + 60_000);
    expect(left).toBeLessThanOrEqual(60_000);
    expect(left).toBeGreaterThan(0);
  });

  it('stays Infinity with no timeout anywhere', async () => {
    const clock = new ManualClock();
    const p = pipeline(retry({ clock, maxAttempts: 2 }));
    expect(await p.execute(read)).toEqual([1, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]);
  });
});
