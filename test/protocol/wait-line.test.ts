/**
 * The public wait line (`WaitLine`), as a gate defined outside the library uses it: the stub
 * of test/support keeps its waiting calls in one, in real pipelines on a manual clock.
 */
import { describe, expect, it } from 'vitest';
import { OptionsError, pipeline } from '../../src/index.js';
import { WaitLine } from '../../src/kinds/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { resolveStubOptions, Stub, StubBusyError } from '../support/answeringKind.js';
import { deferred } from '../support/async.js';
import { errorOf } from '../support/errors.js';

/** A stub letting one call through at once, its line bounded by `maxWait` ms, and a held call. */
function heldStub(maxWait: number, maxQueue = 100) {
  const clock = new ManualClock();
  const stub = new Stub(resolveStubOptions({ limit: 1, maxWait, maxQueue, clock }));
  const p = pipeline(stub);
  const held = deferred<string>();
  const holding = p.execute(() => held.promise);
  return { clock, stub, p, held, holding };
}

describe('WaitLine', () => {
  it('refuses each call when its own wait passes, oldest first, and then keeps no timer', async () => {
    const { clock, stub, p, held, holding } = heldStub(100);
    const first = p.tryExecute(() => 'first');
    await clock.advanceAsync(50);
    const second = p.tryExecute(() => 'second');
    await clock.advanceAsync(50);
    const r1 = await first;
    expect(r1.ok === false && r1.error).toBeInstanceOf(StubBusyError);
    expect(stub.stats().waiting).toBe(1);
    await clock.advanceAsync(49);
    expect(stub.stats().waiting).toBe(1);
    await clock.advanceAsync(1);
    const r2 = await second;
    expect(r2.ok === false && r2.error).toBeInstanceOf(StubBusyError);
    expect(stub.stats()).toMatchObject({ waiting: 0, refused: 2 });
    expect(clock.pendingTimers).toBe(0);
    held.resolve('held');
    await holding;
  });

  it('drops its timer when the last waiting call leaves by its signal', async () => {
    const { clock, stub, p, held, holding } = heldStub(1_000);
    const abort = new AbortController();
    const waiting = p.tryExecute(() => 'x', { signal: abort.signal });
    expect(clock.pendingTimers).toBe(1);
    abort.abort(new Error('gone'));
    expect((await waiting).ok).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    expect(stub.stats().waiting).toBe(0);
    held.resolve('held');
    await holding;
    expect(stub.stats().inFlight).toBe(0);
  });

  it('admits the calls still waiting after many left, in order, holding no more than it must', async () => {
    const { stub, p, held, holding } = heldStub(10_000, 1_000);
    const order: number[] = [];
    const calls = Array.from({ length: 200 }, (_, i) => {
      const abort = new AbortController();
      const call = p.tryExecute(
        () => {
          order.push(i);
          return i;
        },
        { signal: abort.signal },
      );
      return { i, abort, call };
    });
    for (const c of calls) if (c.i % 10 !== 0) c.abort.abort(new Error('gone'));
    expect(stub.stats().waiting).toBe(20);
    // Entries of calls that left are dropped as they pile up (twice the waiting calls, and 16).
    expect(
      (stub as unknown as { line: { entries: unknown[]; head: number } }).line.entries.length,
    ).toBeLessThanOrEqual(2 * 20 + 17);
    held.resolve('held');
    await holding;
    await Promise.all(calls.map((c) => c.call));
    expect(order).toEqual(calls.filter((c) => c.i % 10 === 0).map((c) => c.i));
    expect(stub.stats()).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it('is full at maxLength: the gate refuses rather than making more calls wait', async () => {
    const { stub, p, held, holding } = heldStub(10_000, 2);
    const waiting = [p.execute(() => 'a'), p.execute(() => 'b')];
    const refused = await p.tryExecute(() => 'c');
    expect(refused.ok === false && refused.error).toBeInstanceOf(StubBusyError);
    expect(stub.stats()).toMatchObject({ waiting: 2, refused: 1 });
    held.resolve('held');
    await holding;
    await expect(Promise.all(waiting)).resolves.toEqual(['a', 'b']);
  });

  it('refuses options out of range, naming them', () => {
    const timedOut = () => new Error('late');
    expect(errorOf(OptionsError, () => new WaitLine({ timeout: -1, timedOut })).option).toBe(
      'timeout',
    );
    expect(errorOf(OptionsError, () => new WaitLine({ maxLength: 1.5, timedOut })).option).toBe(
      'maxLength',
    );
    const noError = { timedOut: 1 as unknown as () => Error };
    expect(errorOf(OptionsError, () => new WaitLine(noError)).option).toBe('timedOut');
    expect(new WaitLine({ timedOut }).full).toBe(false);
    expect(new WaitLine({ maxLength: 0, timedOut }).full).toBe(true);
  });
});
