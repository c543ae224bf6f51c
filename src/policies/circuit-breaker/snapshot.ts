import type { CircuitState } from './state.js';
import type { WindowSnapshot } from './windows/HealthWindow.js';

/**
 * A breaker's state as plain JSON-compatible data, from `breaker.toJSON()`, to be passed back
 * as `initialState` (for example to survive a serverless cold start). Times are stored as
 * durations counted back from when the snapshot was taken (the time left in a break, the age of
 * a time window's buckets), never as clock readings, which mean nothing in another process: a
 * snapshot restores the same whatever the new process's clock reads.
 */
export interface CircuitBreakerSnapshot {
  readonly version: 1;
  readonly state: CircuitState;
  /** ms left in the open period (0 unless open). */
  readonly openRemaining: number;
  /** Openings since the breaker last closed, which drive the break backoff. */
  readonly consecutiveOpens: number;
  readonly window: WindowSnapshot;
}
