import type { TransitionReason } from '../events.js';
import type { HealthWindow, WindowSnapshot } from './HealthWindow.js';

/** @internal Counts failures (and slow calls) in a row; any other outcome resets the run. */
export class ConsecutiveWindow implements HealthWindow {
  calls = 0;
  failures = 0;
  slowCalls = 0;

  constructor(
    private threshold: number,
    private trackSlow: boolean,
  ) {}

  /** New thresholds for the outcomes to come; the run so far is kept. */
  retune(threshold: number, trackSlow: boolean): void {
    this.threshold = threshold;
    this.trackSlow = trackSlow;
  }

  record(failure: boolean, slow: boolean): boolean {
    this.calls++;
    this.failures = failure ? this.failures + 1 : 0;
    this.slowCalls = slow ? this.slowCalls + 1 : 0;
    return failure || slow;
  }

  judge(): TransitionReason | undefined {
    if (this.failures >= this.threshold) return 'consecutive-failures';
    if (this.trackSlow && this.slowCalls >= this.threshold) return 'consecutive-slow-calls';
    return undefined;
  }

  reset(): void {
    this.calls = 0;
    this.failures = 0;
    this.slowCalls = 0;
  }

  toSnapshot(): WindowSnapshot {
    return { kind: 'consecutive', data: [this.failures, this.slowCalls] };
  }

  restoreCalls(calls: number): void {
    this.reset();
    this.calls = calls;
  }

  restore(snapshot: WindowSnapshot): void {
    const [failures = 0, slow = 0] = snapshot.data as readonly number[];
    this.failures = failures;
    this.slowCalls = slow;
    this.calls = Math.max(failures, slow);
  }
}
