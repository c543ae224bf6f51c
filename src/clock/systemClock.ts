import { MAX_DURATION_MS } from '../validation/validate.js';
import type { Clock, TimerHandle } from './Clock.js';

interface Unrefable {
  ref?: () => void;
  unref?: () => void;
}

/**
 * The real clock: `performance.now()` and `setTimeout`. Used by every policy unless a clock
 * is passed in its options.
 */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer(callback: () => void, ms: number, keepAlive = true): TimerHandle {
    // A delay computed as `deadline - now` may come out a fraction above 2^31-1 ms (a break of
    // the longest valid duration): setTimeout would warn and fire after 1 ms. Firing a fraction
    // of a millisecond early is safe, since every caller checks the clock when woken.
    const handle = setTimeout(callback, Math.min(ms, MAX_DURATION_MS));
    if (!keepAlive) (handle as Unrefable).unref?.();
    return handle;
  },
  clearTimer(handle: TimerHandle): void {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
  setKeepAlive(handle: TimerHandle, keepAlive: boolean): void {
    const h = handle as Unrefable;
    if (keepAlive) h.ref?.();
    else h.unref?.();
  },
};
