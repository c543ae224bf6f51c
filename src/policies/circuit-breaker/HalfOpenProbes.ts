/**
 * @internal What a breaker asks, when half-open, before admitting a probe it has room for:
 * false refuses the call. Shared signals lease probes cluster-wide through it.
 */
export interface ProbeGate {
  mayProbe(now: number): boolean;
}

/**
 * @internal The probes of one half-open period: a handful of calls per break, off the closed
 * path. Made on a breaker's first half-open period and reused for the next ones.
 */
export class HalfOpenProbes {
  private started = 0;
  private inFlightNow = 0;
  private successes = 0;
  private failures = 0;
  /** When the probes must decide, counted from the first; Infinity before it. */
  private decideBy = Number.POSITIVE_INFINITY;

  /** A new half-open period: no probe yet. */
  begin(): void {
    this.started = 0;
    this.inFlightNow = 0;
    this.successes = 0;
    this.failures = 0;
    this.decideBy = Number.POSITIVE_INFINITY;
  }

  get inFlight(): number {
    return this.inFlightNow;
  }

  /** When the probes must have decided; Infinity before the first probe. */
  get deadline(): number {
    return this.decideBy;
  }

  /** True when a probe has ended (its outcome counts toward the verdict). */
  get anyEnded(): boolean {
    return this.successes + this.failures > 0;
  }

  /** True when there is room for one more probe out of `probes`, `maxConcurrent` at once. */
  hasRoom(probes: number, maxConcurrent: number): boolean {
    return this.started < probes && this.inFlightNow < maxConcurrent;
  }

  /** Starts a probe at `now`; the first starts the `maxWait` for their verdict. */
  start(now: number, maxWait: number): void {
    if (this.decideBy === Number.POSITIVE_INFINITY) this.decideBy = now + maxWait;
    this.started++;
    this.inFlightNow++;
  }

  /** The probe told nothing (its outcome was ignored): its slot is free again. */
  giveBack(): void {
    this.inFlightNow--;
    this.started--;
  }

  /** Counts the end of a probe. */
  end(failed: boolean): void {
    this.inFlightNow--;
    if (failed) this.failures++;
    else this.successes++;
  }

  /** Whether the probes so far close the breaker, re-open it, or wait for more. */
  verdict(probes: number, successRatio: number): 'close' | 'reopen' | undefined {
    // The epsilon keeps 0.8 × 5 from rounding up to 5; at least one success is always needed.
    const needed = Math.max(1, Math.ceil(probes * successRatio - 1e-9));
    if (this.successes >= needed) return 'close';
    if (this.failures > probes - needed) return 'reopen';
    return undefined;
  }
}
