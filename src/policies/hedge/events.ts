import type { HedgeReason } from '../../protocol/around.js';

export type { HedgeReason };

/** Emitted when a hedge starts. */
export interface HedgeEvent {
  /** The hedge that starts: 1 for the first (the call's second attempt). */
  readonly hedge: number;
  /**
   * `delay`: its delay passed with no result; `failure`: the attempt before it failed;
   * `pushback`: the wait the server's pushback on a failure asked for passed.
   */
  readonly reason: HedgeReason;
}

/** Emitted when the budget refuses a hedge, which then does not start. */
export interface HedgeRefusedEvent {
  /** The hedge refused: 1 for the first. */
  readonly hedge: number;
  /** What would have started it. */
  readonly reason: HedgeReason;
}
