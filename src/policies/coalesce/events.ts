/** Emitted when every caller of a flight left before it settled: its work's signal aborted. */
export interface CoalesceAbandonedEvent {
  /** The flight's key (undefined for a call without one, which ran alone). */
  readonly key: string | undefined;
  /** The reason the last caller left with, which the work's signal aborted with. */
  readonly reason: unknown;
}
