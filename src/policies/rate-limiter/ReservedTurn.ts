/**
 * @internal A caller of `acquire` waiting for the turn it reserved: its promise, its signal and
 * what it reserved, given back to its limiter when the signal aborts (the permits go back when
 * no later reservation depends on them).
 */
export abstract class ReservedTurn {
  done = false;

  constructor(
    protected readonly resolve: () => void,
    protected readonly reject: (reason: unknown) => void,
    protected readonly signal: AbortSignal | undefined,
    /** The TAT right after this reservation, to give it back on abort. */
    readonly reservedTat: number,
    readonly permits: number,
  ) {}

  /** The signal aborted. */
  handleEvent(): void {
    if (this.done) return;
    this.finish();
    this.giveBack();
    this.reject(this.signal!.reason);
  }

  /** Gives the reservation back to the limiter that made it. */
  protected abstract giveBack(): void;

  protected finish(): void {
    this.done = true;
    this.signal?.removeEventListener('abort', this);
  }
}
