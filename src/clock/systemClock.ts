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
    const handle = setTimeout(callback, ms);
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
