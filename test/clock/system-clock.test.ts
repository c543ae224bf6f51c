import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/index.js';

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('systemClock', () => {
  it('arms a delay a fraction above 2^31-1 ms (a longest break computed as deadline - now) without an overflow warning', async () => {
    process.on('warning', onWarning);
    let fired = false;
    const handle = systemClock.setTimer(
      () => {
        fired = true;
      },
      2_147_483_647.0000002,
      false,
    );
    // Node reports an overflow (and fires after 1 ms) on a later turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 20));
    systemClock.clearTimer(handle);
    expect(fired).toBe(false);
    expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning')).toEqual([]);
  });
});
