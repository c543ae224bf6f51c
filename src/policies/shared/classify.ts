import { BRAND } from '../../errors/BreakwaterError.js';
import { coreCodes } from '../../errors/codes.js';
import { rejectionReached } from '../../errors/PolicyRejectedError.js';

type Branded = { [BRAND]?: unknown; code?: unknown };

/**
 * @internal True for errors that say something about the dependency. A policy rejection made
 * without calling it (an open breaker, a full bulkhead, a rate limit: any kind whose rejection
 * says so) is not counted; a timeout did reach it and is counted.
 */
export function isCountedError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || (error as Branded)[BRAND] !== true) {
    return true;
  }
  const reached = rejectionReached(error);
  if (reached !== undefined) return reached;
  // A disposed policy says nothing about the dependency either, and retrying it would re-arm
  // timers after dispose().
  return (error as Branded).code !== coreCodes.Usage;
}
