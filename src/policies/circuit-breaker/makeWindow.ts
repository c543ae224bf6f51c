import type { ResolvedBreakerOptions } from './options.js';
import { ConsecutiveWindow } from './windows/ConsecutiveWindow.js';
import { CountWindow } from './windows/CountWindow.js';
import type { HealthWindow, Thresholds } from './windows/HealthWindow.js';
import { TimeWindow } from './windows/TimeWindow.js';

/** @internal The empty window that options `o` describe. */
export function makeWindow(o: ResolvedBreakerOptions): HealthWindow {
  if (o.windowKind === 'consecutive') {
    return new ConsecutiveWindow(o.threshold, o.slowCallDuration !== Number.POSITIVE_INFINITY);
  }
  const t = thresholdsOf(o);
  return o.windowKind === 'count'
    ? new CountWindow(o.size, t)
    : new TimeWindow(o.duration, o.buckets, t);
}

/**
 * @internal True when options `o` describe a window of the same shape as `old` (kind and size,
 * or duration and buckets), which can keep its outcomes through {@link retuneWindow}.
 */
export function sameWindowShape(o: ResolvedBreakerOptions, old: ResolvedBreakerOptions): boolean {
  return (
    o.windowKind === old.windowKind &&
    (o.windowKind === 'consecutive' ||
      (o.windowKind === 'count'
        ? o.size === old.size
        : o.duration === old.duration && o.buckets === old.buckets))
  );
}

/** @internal Gives window `w`, of the shape options `o` describe, their thresholds. */
export function retuneWindow(w: HealthWindow, o: ResolvedBreakerOptions): void {
  const t = thresholdsOf(o);
  if (w instanceof ConsecutiveWindow) w.retune(o.threshold, t.trackSlow);
  else (w as CountWindow | TimeWindow).retune(t);
}

function thresholdsOf(o: ResolvedBreakerOptions): Thresholds {
  return {
    minimumCalls: o.minimumCalls,
    failureRateThreshold: o.failureRateThreshold,
    slowCallRateThreshold: o.slowCallRateThreshold,
    trackSlow: o.slowCallDuration !== Number.POSITIVE_INFINITY,
    failureRun: o.failureRun,
  };
}
