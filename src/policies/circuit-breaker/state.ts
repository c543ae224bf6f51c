/** The states of a circuit breaker. */
export const CircuitState = {
  /** Calls flow; outcomes are recorded in the window. */
  Closed: 'closed',
  /** Calls are refused until the break duration has passed. */
  Open: 'open',
  /** A limited number of probe calls decide whether to close or re-open. */
  HalfOpen: 'half-open',
  /** Calls flow; nothing is recorded, the breaker never opens. */
  Disabled: 'disabled',
  /** Calls are refused until the breaker is reset by hand. */
  ForcedOpen: 'forced-open',
  /** Calls flow and are recorded, but the breaker never opens (for trying settings out). */
  MetricsOnly: 'metrics-only',
} as const;

/** One of the {@link CircuitState} values. */
export type CircuitState = (typeof CircuitState)[keyof typeof CircuitState];

/** @internal State codes used on the hot path. */
export const S_CLOSED = 0;
export const S_OPEN = 1;
export const S_HALF_OPEN = 2;
export const S_DISABLED = 3;
export const S_FORCED_OPEN = 4;
export const S_METRICS_ONLY = 5;

/** @internal No token is negative: no call's token matches it. */
export const NOT_QUIET = -1;

export const STATE_NAMES: readonly CircuitState[] = [
  CircuitState.Closed,
  CircuitState.Open,
  CircuitState.HalfOpen,
  CircuitState.Disabled,
  CircuitState.ForcedOpen,
  CircuitState.MetricsOnly,
];
