import { BRAND, BreakwaterError, nameErrorClass } from './BreakwaterError.js';
import type { ErrorCode } from './codes.js';

/** Which kind of policy refused a call. */
export type PolicyKind =
  | 'circuitBreaker'
  | 'bulkhead'
  | 'rateLimiter'
  | 'loadShedder'
  | 'adaptiveLimit'
  | 'timeout'
  | 'retry'
  | 'fallback'
  | 'chaos'
  // A kind defined outside the library.
  | (string & {});

/**
 * @internal Carried by every policy rejection, from any copy of the package: true when the
 * call reached the dependency before the policy gave up on it (a timeout), false when the
 * policy refused it without calling (an open breaker, a full bulkhead, a rate limit). Breakers
 * never count and retries never retry a rejection that did not reach the dependency, whatever
 * kind of policy made it.
 */
export const REJECTION: unique symbol = Symbol.for('breakwater.rejection') as never;

type Marked = { [BRAND]?: unknown; [REJECTION]?: unknown; code?: unknown };

/**
 * The rejections of copies of the package whose errors carry no {@link REJECTION} mark, by
 * code: whether each reached the dependency. The list of those copies' codes, closed: a kind
 * added since is known by its mark alone, so its code need not be here.
 */
const UNMARKED: Readonly<Record<string, boolean>> = {
  ERR_BREAKWATER_CIRCUIT_OPEN: false,
  ERR_BREAKWATER_CIRCUIT_ISOLATED: false,
  ERR_BREAKWATER_BULKHEAD_FULL: false,
  ERR_BREAKWATER_RATE_LIMITED: false,
  ERR_BREAKWATER_LOAD_SHED: false,
  ERR_BREAKWATER_CONCURRENCY_LIMIT: false,
  ERR_BREAKWATER_DEADLINE_TOO_SHORT: false,
  ERR_BREAKWATER_TIMEOUT: true,
  ERR_BREAKWATER_RETRY_EXHAUSTED: true,
};

/**
 * @internal For a policy rejection from any copy of the package, whether the call reached the
 * dependency (see {@link REJECTION}); undefined for anything else.
 */
export function rejectionReached(error: unknown): boolean | undefined {
  if (typeof error !== 'object' || error === null || (error as Marked)[BRAND] !== true) {
    return undefined;
  }
  const mark = (error as Marked)[REJECTION];
  if (typeof mark === 'boolean') return mark;
  const code = (error as Marked).code;
  return typeof code === 'string' && Object.hasOwn(UNMARKED, code) ? UNMARKED[code] : undefined;
}

/**
 * Base class of "a policy refused the call": the circuit was open, the bulkhead was full, the
 * deadline passed. Test with `instanceof PolicyRejectedError` or {@link isPolicyRejection}.
 */
export class PolicyRejectedError extends BreakwaterError {
  /** @internal */
  declare readonly [REJECTION]: boolean;
  /** The kind of policy that refused the call. */
  readonly policy: PolicyKind;
  /** The name of the policy instance that refused the call. */
  readonly policyName: string;

  /**
   * `reachedDependency`: the call was made and the policy gave up on it (a timeout), so it
   * says something about the dependency; false for a refusal made without calling.
   */
  constructor(
    code: ErrorCode,
    message: string,
    policy: PolicyKind,
    policyName: string,
    reachedDependency = false,
  ) {
    super(code, message);
    this.policy = policy;
    this.policyName = policyName;
    Object.defineProperty(this, REJECTION, { value: reachedDependency });
  }

  /** `instanceof` for any policy's refusal, from any copy of the library; subclasses go by code. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // Every rejection carries the mark, whatever policy kind made it; subclasses go by code.
    if (this !== PolicyRejectedError) return super[Symbol.hasInstance](value);
    return rejectionReached(value) !== undefined;
  }
}

nameErrorClass(PolicyRejectedError, 'PolicyRejectedError');

/** True when `error` is a breakwater policy rejection (from any copy of the package). */
export function isPolicyRejection(error: unknown): error is PolicyRejectedError {
  return error instanceof PolicyRejectedError;
}
