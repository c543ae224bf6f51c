/** Emitted when the fallback replaces a failure. */
export interface FallbackEvent {
  readonly error?: unknown;
  readonly result?: unknown;
}
