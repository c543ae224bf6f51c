import type { CircuitState } from './state.js';

/** Why a breaker changed state. */
export type TransitionReason =
  | 'failure-rate'
  | 'slow-call-rate'
  | 'consecutive-failures'
  | 'consecutive-slow-calls'
  | 'break-elapsed'
  | 'probes-succeeded'
  | 'probes-failed'
  | 'half-open-timeout'
  | 'manual'
  /** Held open by shared signals: a quorum of instances reported open (`breakwater/redis`). */
  | 'shared-open';

/** Emitted on every state change. */
export interface StateChangeEvent {
  readonly from: CircuitState;
  readonly to: CircuitState;
  readonly reason: TransitionReason;
  /** The generation entered; results of calls admitted under older generations are ignored. */
  readonly generation: number;
  /**
   * Failure rate over the window when a count or time window opened the breaker from closed,
   * else NaN (a consecutive window has no rate).
   */
  readonly failureRate: number;
  /** Slow-call rate over the window, as `failureRate`. */
  readonly slowCallRate: number;
  /**
   * When the window opened the breaker from closed: the calls in a count or time window, or
   * the failures (slow calls) in a row that opened a consecutive one; else 0.
   */
  readonly callsInWindow: number;
  /** How long the breaker stays open, when `to` is `open`; else 0. */
  readonly breakDuration: number;
}

/** Emitted when a call admitted by the breaker ends (successes and failures alike). */
export interface CallOutcomeEvent {
  /** The error of a failed call, or the value of a successful one. */
  readonly detail: unknown;
  /** Duration of the call in ms, or NaN when the pipeline did not read the clock. */
  readonly elapsed: number;
  readonly slow: boolean;
}

/** Emitted when the breaker refuses a call. */
export interface RejectedEvent {
  readonly error: Error;
  readonly state: CircuitState;
}
