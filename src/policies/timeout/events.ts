/** Emitted when a deadline passes. */
export interface TimeoutEvent {
  /** The timeout in ms. */
  readonly timeout: number;
  /** `aggressive` when the call was abandoned at the deadline, `cooperative` when it is awaited. */
  readonly strategy: 'cooperative' | 'aggressive';
}
