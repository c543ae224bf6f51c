import type { TransitionReason } from '../events.js';
import { type HealthWindow, type WindowSnapshot, WindowTotals } from './HealthWindow.js';

/** @internal Counts failures (and slow calls) in a row; any other outcome resets the run. */
export class ConsecutiveWindow extends WindowTotals implements HealthWindow {
  constructor(
    private threshold: number,
    private trackSlow: boolean,
  ) {
    super();
  }

  /** New thresholds for the outcomes to come; the run so far is kept. */
  retune(threshold: number, trackSlow: boolean): void {
    this.threshold = threshold;
    this.trackSlow = trackSlow;
  }

  record(failure: boolean, slow: boolean): boolean {
    this.nCalls++;
    this.nFailures = failure ? this.nFailures + 1 : 0;
    this.nSlow = slow ? this.nSlow + 1 : 0;
    return failure || slow;
  }

  judge(): TransitionReason | undefined {
    if (this.nFailures >= this.threshold) return 'consecutive-failures';
    if (this.trackSlow && this.nSlow >= this.threshold) return 'consecutive-slow-calls';
    return undefined;
  }

  reset(): void {
    this.nCalls = 0;
    this.nFailures = 0;
    this.nSlow = 0;
  }

  toSnapshot(): WindowSnapshot {
    return { kind: 'consecutive', data: [this.nFailures, this.nSlow] };
  }

  restoreCalls(calls: number): void {
    this.reset();
    this.nCalls = calls;
  }

  restore(snapshot: WindowSnapshot): void {
    const [failures = 0, slow = 0] = snapshot.data as readonly number[];
    this.nFailures = failures;
    this.nSlow = slow;
    this.nCalls = Math.max(failures, slow);
  }
}
