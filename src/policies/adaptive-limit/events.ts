import type { LimitChangeReason } from './algorithms.js';
import type { AdaptiveLimitRejection } from './errors.js';

/** Emitted when a window changes the limit (and published on `diagnosticsChannels.limitChange`). */
export interface LimitChangeEvent {
  /** The adaptive limit's name. */
  readonly name: string;
  readonly from: number;
  readonly to: number;
  readonly reason: LimitChangeReason;
  /** The window's mean latency and the baseline after it, in ms. */
  readonly latency: number;
  readonly baseline: number;
  /** Calls answered and dropped in the window. */
  readonly answered: number;
  readonly dropped: number;
  /** The most calls in flight at once in the window. */
  readonly maxInFlight: number;
}

/** Emitted when the adaptive limit refuses a call. */
export interface AdaptiveLimitRejectedEvent {
  readonly reason: AdaptiveLimitRejection;
  readonly limit: number;
  readonly inFlight: number;
  readonly queued: number;
  /** With reason `'deadline'`, the call's time left, in ms (NaN otherwise). */
  readonly timeLeft: number;
  /** The median latency a `'deadline'` refusal fell short of, in ms (NaN otherwise). */
  readonly latency: number;
}
