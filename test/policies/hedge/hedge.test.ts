import { describe, expect, it } from 'vitest';
import {
  type AttemptBudget,
  type ExecutionContext,
  type HedgeEvent,
  hedge,
  pipeline,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { deferred, track } from '../../support/async.js';

describe('Hedge with a fixed delay', () => {
  it('starts a second attempt after the delay and settles with the first answer', async () => {
    const clock = new ManualClock();
    const h = hedge({ clock, delay: 100 });
    const p = pipeline(h);
    const answers = [deferred<string>(), deferred<string>()];
    const seen: number[] = [];
    const call = track(
      p.execute(({ hedge: n }: ExecutionContext) => {
        seen.push(n);
        return answers[n]!.promise;
      }),
      clock,
    );
    await clock.advanceAsync(99);
    expect(seen).toEqual([0]);
    await clock.advanceAsync(1);
    expect(seen).toEqual([0, 1]);
    answers[1]!.resolve('second');
    await call.done;
    expect(call.value).toBe('second');
    expect(h.stats()).toEqual({ calls: 1, hedges: 1, won: 1, refused: 0 });
    answers[0]!.resolve('first, too late');
  });
});
