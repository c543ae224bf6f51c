import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';

import { BrokenCircuitError, circuitBreakerCodes, IsolatedCircuitError } from './errors.js';

/**
 * @internal The errors a breaker's refusals reject with. Outside debug mode each is one
 * stackless error, made on the first refusal that needs it (most breakers never refuse), then
 * the same object for every refusal after it; in debug mode every refusal gets a fresh one.
 */
export class Refusals {
  /** debug mode: the fresh error of the refusal being made, also handed to the caller. */
  private pending: BrokenCircuitError | undefined = undefined;
  /** Refusals of an open (or full half-open) breaker; its `openUntil` kept equal to the breaker's. */
  private open: BrokenCircuitError | undefined = undefined;
  private halfOpen: BrokenCircuitError | undefined = undefined;
  /** Refusals of a breaker held open by hand. */
  private isolated: IsolatedCircuitError | undefined = undefined;

  constructor(
    private readonly name: string,
    private readonly clock: Clock,
  ) {}

  /** The reused error of refusals while open, once made. */
  get openError(): BrokenCircuitError | undefined {
    return this.open;
  }

  /** The reused error of refusals while isolated, once made. */
  get isolatedError(): IsolatedCircuitError | undefined {
    return this.isolated;
  }

  /** The refusal's error is handed to listeners first: the caller gets that one, once. */
  keep(error: BrokenCircuitError): void {
    this.pending = error;
  }

  /** The kept error of {@link keep}, taken once. */
  takePending(): BrokenCircuitError | undefined {
    const pending = this.pending;
    this.pending = undefined;
    return pending;
  }

  /** The break now ends at `openUntil`: the reused error says so. */
  breakEndsAt(openUntil: number): void {
    if (this.open !== undefined) this.open.openUntil = openUntil;
  }

  /** The error of a refusal while open, until `openUntil`. */
  whileOpen(openUntil: number, debug: boolean): BrokenCircuitError {
    if (debug) return new BrokenCircuitError(this.name, this.clock, openUntil);
    return this.open ?? this.makeOpen(openUntil);
  }

  /** The error of a refusal while half-open: the state changes at the latest at `until`. */
  whileHalfOpen(until: number, debug: boolean): BrokenCircuitError {
    if (debug) {
      return new BrokenCircuitError(
        this.name,
        this.clock,
        until,
        circuitBreakerCodes.CircuitOpen,
        true,
      );
    }
    const error = this.halfOpen ?? this.makeHalfOpen();
    error.openUntil = until;
    return error;
  }

  /** The error of a refusal while held open by hand. */
  whileIsolated(debug: boolean): IsolatedCircuitError {
    if (debug) return new IsolatedCircuitError(this.name, this.clock);
    return this.isolated ?? this.makeIsolated();
  }

  // The errors are made in methods of their own: a method holding the arrow function would
  // allocate its context (for `this`) on every call, even when the error is already made.
  private makeOpen(openUntil: number): BrokenCircuitError {
    this.open = stackless(() => new BrokenCircuitError(this.name, this.clock, openUntil));
    return this.open;
  }

  private makeHalfOpen(): BrokenCircuitError {
    this.halfOpen = stackless(
      () => new BrokenCircuitError(this.name, this.clock, 0, circuitBreakerCodes.CircuitOpen, true),
    );
    return this.halfOpen;
  }

  private makeIsolated(): IsolatedCircuitError {
    this.isolated = stackless(() => new IsolatedCircuitError(this.name, this.clock));
    return this.isolated;
  }
}
