import { nameErrorClass } from '../../errors/BreakwaterError.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';

/** The stable codes of this kind's errors (also in `ErrorCode`). */
export const adaptiveLimitCodes = {
  ConcurrencyLimit: 'ERR_BREAKWATER_CONCURRENCY_LIMIT',
  DeadlineTooShort: 'ERR_BREAKWATER_DEADLINE_TOO_SHORT',
} as const;

/**
 * Why an adaptive limit refused a call: the limit was full with no room in the queue
 * (`'limit'`), the call waited past `queueTimeout` (`'queue-timeout'`) or past `codelTarget`
 * while a CoDel queue stood (`'codel'`), or its time left was below the median latency
 * (`'deadline'`).
 */
export type AdaptiveLimitRejection = 'limit' | 'queue-timeout' | 'codel' | 'deadline';

/**
 * An adaptive concurrency limit refused the call without making it: its limit was full (code
 * `ERR_BREAKWATER_CONCURRENCY_LIMIT`), or the call's deadline left it less time than the
 * dependency's median latency (code `ERR_BREAKWATER_DEADLINE_TOO_SHORT`, reason `'deadline'`).
 * Breakers do not count it and retries do not retry it.
 *
 * Unless the limit has `debug: true`, one error object per reason serves every refusal, so it
 * carries nothing particular to one call: `limit`, `timeLeft` and `latency` are NaN, and the
 * `onRejected` event carries them. With `debug: true`, each refusal gets a fresh error with them.
 */
export class ConcurrencyLimitError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [
    adaptiveLimitCodes.ConcurrencyLimit,
    adaptiveLimitCodes.DeadlineTooShort,
  ];
  readonly reason: AdaptiveLimitRejection;
  /** With `debug: true`, the limit when the call was refused (NaN otherwise). */
  limit: number;
  /**
   * With `debug: true` and reason `'deadline'`: the call's time left and the median latency it
   * fell short of, in ms (NaN otherwise).
   */
  timeLeft: number;
  latency: number;

  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(policyName: string, reason: AdaptiveLimitRejection, limit: number) {
    super(
      reason === 'deadline'
        ? adaptiveLimitCodes.DeadlineTooShort
        : adaptiveLimitCodes.ConcurrencyLimit,
      reason === 'limit'
        ? `Adaptive limit "${policyName}" is full`
        : reason === 'queue-timeout'
          ? `Adaptive limit "${policyName}": the call waited in the queue past its queue timeout`
          : reason === 'codel'
            ? `Adaptive limit "${policyName}": the queue stood longer than codelInterval and the call waited past codelTarget`
            : `Adaptive limit "${policyName}": the call's time left is below the dependency's median latency`,
      'adaptiveLimit',
      policyName,
    );
    this.reason = reason;
    this.limit = limit;
    this.timeLeft = Number.NaN;
    this.latency = Number.NaN;
  }
}

nameErrorClass(ConcurrencyLimitError, 'ConcurrencyLimitError');

/** True when `error` is a {@link ConcurrencyLimitError} from any copy of breakwater. */
export function isConcurrencyLimitError(error: unknown): error is ConcurrencyLimitError {
  return error instanceof ConcurrencyLimitError;
}
