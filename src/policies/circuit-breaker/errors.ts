import type { Clock } from '../../clock/Clock.js';
import { nameErrorClass } from '../../errors/BreakwaterError.js';
import type { ErrorCode } from '../../errors/codes.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';

/** The stable codes of this kind's errors (also in `ErrorCode`). */
export const circuitBreakerCodes = {
  CircuitOpen: 'ERR_BREAKWATER_CIRCUIT_OPEN',
  CircuitIsolated: 'ERR_BREAKWATER_CIRCUIT_ISOLATED',
} as const;

/**
 * The circuit is open (or half-open with every probe slot taken): the call was refused without
 * reaching the dependency. `retryAfter` says how long until the breaker lets a probe through;
 * when half-open, the most its probes in flight may take to decide (`halfOpen.maxWait` from
 * the first), after which it has closed or opened again.
 */
export class BrokenCircuitError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [
    circuitBreakerCodes.CircuitOpen,
    circuitBreakerCodes.CircuitIsolated,
  ];
  /** @internal Clock reading at which the open period ends. */
  openUntil: number;
  readonly #clock: Clock;

  /** Built by the breaker; not meant to be constructed by users. */
  constructor(
    policyName: string,
    clock: Clock,
    openUntil: number,
    code: ErrorCode = circuitBreakerCodes.CircuitOpen,
    halfOpen = false,
  ) {
    super(
      code,
      code === circuitBreakerCodes.CircuitIsolated
        ? `Circuit breaker "${policyName}" is isolated (held open by hand)`
        : halfOpen
          ? `Circuit breaker "${policyName}" is half-open with every probe slot taken: retryAfter is the most its probes may take to decide`
          : `Circuit breaker "${policyName}" is open`,
      'circuitBreaker',
      policyName,
    );
    this.#clock = clock;
    this.openUntil = openUntil;
  }

  /** Milliseconds until the breaker admits a probe (Infinity while isolated), read now. */
  get retryAfter(): number {
    return Math.max(0, this.openUntil - this.#clock.now());
  }
}

nameErrorClass(BrokenCircuitError, 'BrokenCircuitError');

/** The circuit is held open by hand ({@link CircuitBreaker.isolate} or `forceOpen()`). */
export class IsolatedCircuitError extends BrokenCircuitError {
  static override readonly codes: readonly string[] = [circuitBreakerCodes.CircuitIsolated];
  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(policyName: string, clock: Clock) {
    super(policyName, clock, Number.POSITIVE_INFINITY, circuitBreakerCodes.CircuitIsolated);
  }
}

nameErrorClass(IsolatedCircuitError, 'IsolatedCircuitError');

/** True when `error` is a {@link BrokenCircuitError} from any copy of breakwater. */
export function isBrokenCircuitError(error: unknown): error is BrokenCircuitError {
  return error instanceof BrokenCircuitError;
}
