import { nameErrorClass } from '../../errors/BreakwaterError.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';

/** The stable codes of this kind's errors (also in `ErrorCode`). */
export const bulkheadCodes = {
  BulkheadFull: 'ERR_BREAKWATER_BULKHEAD_FULL',
} as const;

/**
 * Why a bulkhead refused a call: no slot and no room in the queue (`'full'`), queued past
 * `queueTimeout` (`'queue-timeout'`), or queued past `codelTarget` while a CoDel queue stood
 * (`'codel'`).
 */
export type BulkheadRejection = 'full' | 'queue-timeout' | 'codel';

/**
 * The bulkhead was full (and its queue too), or the call waited in the queue too long (past
 * `queueTimeout`, or past `codelTarget` while a CoDel queue stood).
 */
export class BulkheadRejectedError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [bulkheadCodes.BulkheadFull];
  readonly reason: BulkheadRejection;
  /** The bulkhead's `maxConcurrent`. */
  readonly maxConcurrent: number;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(policyName: string, reason: BulkheadRejection, maxConcurrent: number) {
    super(
      bulkheadCodes.BulkheadFull,
      reason === 'full'
        ? `Bulkhead "${policyName}" is full (${maxConcurrent} in flight)`
        : reason === 'queue-timeout'
          ? `Bulkhead "${policyName}": the call waited in the queue past its queue timeout`
          : `Bulkhead "${policyName}": the queue stood longer than codelInterval and the call waited past codelTarget`,
      'bulkhead',
      policyName,
    );
    this.reason = reason;
    this.maxConcurrent = maxConcurrent;
  }
}

nameErrorClass(BulkheadRejectedError, 'BulkheadRejectedError');

/** True when `error` is a {@link BulkheadRejectedError} from any copy of breakwater. */
export function isBulkheadRejectedError(error: unknown): error is BulkheadRejectedError {
  return error instanceof BulkheadRejectedError;
}
