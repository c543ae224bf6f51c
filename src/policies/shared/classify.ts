import { BRAND } from '../../errors/BreakwaterError.js';
import { ErrorCode } from '../../errors/codes.js';

type Branded = { [BRAND]?: unknown; code?: unknown };

/**
 * @internal True for errors that say something about the dependency. Refusals by other
 * breakwater policies (an open breaker, a full bulkhead, a rate limit) never reached it, so they are not
 * counted; a timeout did reach it and is counted.
 */
export function isCountedError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || (error as Branded)[BRAND] !== true)
    return true;
  const code = (error as Branded).code;
  return (
    code !== ErrorCode.CircuitOpen &&
    code !== ErrorCode.CircuitIsolated &&
    code !== ErrorCode.BulkheadFull &&
    code !== ErrorCode.RateLimited &&
    // A disposed policy says nothing about the dependency either, and retrying it would re-arm
    // timers after dispose().
    code !== ErrorCode.Usage
  );
}
