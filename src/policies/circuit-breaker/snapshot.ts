import type { CircuitState } from './state.js';
import type { WindowSnapshot } from './windows/HealthWindow.js';

/**
 * A breaker's state as plain JSON-compatible data, from `breaker.toJSON()`, to be passed back
 * as `initialState` (for example to survive a serverless cold start). Times are stored as
 * remaining durations, since clock readings mean nothing in another process.
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
