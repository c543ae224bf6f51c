import { S_FORCED_OPEN, S_OPEN } from './state.js';

/**
 * @internal What a breaker counted since it was built: outcomes, refusals by the state that
 * made them, and transitions by the state entered. Written by its controller; read by the
 * stats, metric sums and the shelving of keyed breakers.
 */
export class BreakerTally {
  successes = 0;
  failures = 0;
  ignored = 0;
  rejections = 0;
  rejectedHalfOpen = 0;
  rejectedForced = 0;
  /** Transitions by state entered; made on the first transition. */
  enteredBy: number[] | undefined = undefined;
  /** When the current state was entered. */
  enteredAt = 0;

  /** Counts a refusal made in state code `s`. */
  refused(s: number): void {
    this.rejections++;
    if (s !== S_OPEN) {
      if (s === S_FORCED_OPEN) this.rejectedForced++;
      else this.rejectedHalfOpen++;
    }
  }

  /** Counts a transition to state code `to`, made at `now`. */
  entered(to: number, now: number): void {
    if (this.enteredBy === undefined) this.enteredBy = [0, 0, 0, 0, 0, 0];
    this.enteredBy[to]!++;
    this.enteredAt = now;
  }

  /** Refusals made while open. */
  get rejectedOpen(): number {
    return this.rejections - this.rejectedHalfOpen - this.rejectedForced;
  }
}
