import type { BulkheadRejection } from './errors.js';

/** Emitted when the bulkhead refuses a call. */
export interface BulkheadRejectedEvent {
  readonly reason: BulkheadRejection;
  readonly inFlight: number;
  readonly queued: number;
}
