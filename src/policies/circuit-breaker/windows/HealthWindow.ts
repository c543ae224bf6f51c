import type { TransitionReason } from '../events.js';

/** @internal Thresholds a window judges against. */
export interface Thresholds {
  readonly minimumCalls: number;
  readonly failureRateThreshold: number;
  readonly slowCallRateThreshold: number;
  /** False when slow-call tracking is off. */
  readonly trackSlow: boolean;
  /** Failures in a row that open the breaker whatever the rates (Infinity: off). */
  readonly failureRun: number;
}

/** Plain-data form of a window's contents, for export and restore. */
export interface WindowSnapshot {
  readonly kind: 'consecutive' | 'count' | 'time';
  /**
   * consecutive: [failuresInARow, slowInARow]; count: outcome codes, oldest first; time: per
   * bucket [ageMs, calls, failures, slow], oldest first, `ageMs` being how many buckets before
   * the snapshot's current one it is, times the bucket width.
   */
  readonly data: readonly number[] | readonly (readonly number[])[];
}

/**
 * @internal What a breaker remembers of recent outcomes. Implementations keep numbers in
 * typed arrays and never allocate per call.
 */
export interface HealthWindow {
  /** Records one outcome; true when a rate may have risen and the window should be judged. */
  record(failure: boolean, slow: boolean, now: number): boolean;
  /** The reason to open, judged as of `now`, or undefined to stay closed. */
  judge(now: number): TransitionReason | undefined;
  /** Calls, failures and slow calls as of the last `judge`. */
  readonly calls: number;
  readonly failures: number;
  readonly slowCalls: number;
  reset(): void;
  /**
   * Empties the window, then holds `calls` successes (as far as it can hold them), for a
   * breaker rebuilt from a record of its counts.
   */
  restoreCalls(calls: number): void;
  toSnapshot(now: number): WindowSnapshot;
  restore(snapshot: WindowSnapshot, now: number): void;
}

/**
 * @internal The running totals every window keeps, written only by the window itself and read
 * by its breaker through the getters.
 */
export abstract class WindowTotals {
  protected nCalls = 0;
  protected nFailures = 0;
  protected nSlow = 0;

  /** Calls held, as of the last `judge`. */
  get calls(): number {
    return this.nCalls;
  }
  /** Failures held, as of the last `judge`. */
  get failures(): number {
    return this.nFailures;
  }
  /** Slow calls held, as of the last `judge`. */
  get slowCalls(): number {
    return this.nSlow;
  }
}

/** @internal Shared rate judgement of the count and time windows. */
export function judgeRates(
  calls: number,
  failures: number,
  slowCalls: number,
  run: number,
  t: Thresholds,
): TransitionReason | undefined {
  // A run needs no minimum of calls: that many failures in a row are evidence enough.
  if (run >= t.failureRun) return 'consecutive-failures';
  if (calls < t.minimumCalls || calls === 0) return undefined;
  if (failures / calls >= t.failureRateThreshold) return 'failure-rate';
  if (t.trackSlow && slowCalls / calls >= t.slowCallRateThreshold) return 'slow-call-rate';
  return undefined;
}
