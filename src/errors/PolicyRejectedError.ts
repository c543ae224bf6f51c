import { BreakwaterError } from './BreakwaterError.js';
import { ErrorCode } from './codes.js';

/** Which kind of policy refused a call. */
export type PolicyKind =
  | 'circuitBreaker'
  | 'bulkhead'
  | 'rateLimiter'
  | 'timeout'
  | 'retry'
  | 'fallback';

/**
 * Base class of "a policy refused the call": the circuit was open, the bulkhead was full, the
 * deadline passed. Test with `instanceof PolicyRejectedError` or {@link isPolicyRejection}.
 */
export class PolicyRejectedError extends BreakwaterError {
  static override readonly codes: readonly string[] = [
    ErrorCode.CircuitOpen,
    ErrorCode.CircuitIsolated,
    ErrorCode.BulkheadFull,
    ErrorCode.RateLimited,
    ErrorCode.Timeout,
  ];
  /** The kind of policy that refused the call. */
  readonly policy: PolicyKind;
  /** The name of the policy instance that refused the call. */
  readonly policyName: string;

  constructor(code: ErrorCode, message: string, policy: PolicyKind, policyName: string) {
    super(code, message);
    this.policy = policy;
    this.policyName = policyName;
  }
}

Object.defineProperty(PolicyRejectedError.prototype, 'name', {
  value: 'PolicyRejectedError',
  writable: true,
});

/** True when `error` is a breakwater policy rejection (from any copy of the package). */
export function isPolicyRejection(error: unknown): error is PolicyRejectedError {
  return error instanceof PolicyRejectedError;
}
