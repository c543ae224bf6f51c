import type { AttemptBudget } from '../../src/index.js';

/**
 * A retry budget of the `concurrency` model (Envoy, failsafe-go), written for tests of the
 * policies that spend one until the library's own lands: extra attempts in flight at most
 * `ratio` of the calls in flight, and at least `min`. It is a policy input, not a stand-in for
 * a part of the library, and records what it was asked, so tests can check the protocol.
 */
export function concurrencyBudget({ ratio = 0.2, min = 3 } = {}) {
  const budget = {
    /** Calls in flight. */
    active: 0,
    /** Extra attempts granted and not ended. */
    extra: 0,
    /** The most extra attempts in flight at once. */
    maxExtra: 0,
    /** Extra attempts granted, refused, and ended. */
    granted: 0,
    refused: 0,
    ended: 0,
    calls: 0,
    callsEnded: 0,
    succeeded: 0,
    failed: 0,
    /** Grants beyond what the model allows at that moment (must stay 0). */
    overdrafts: 0,
    allowance(): number {
      return Math.max(min, ratio * budget.active);
    },
    callStarted() {
      budget.calls++;
      budget.active++;
    },
    callEnded() {
      budget.callsEnded++;
      budget.active--;
    },
    attemptSucceeded() {
      budget.succeeded++;
    },
    attemptFailed() {
      budget.failed++;
    },
    trySpend(): boolean {
      if (budget.extra + 1 > budget.allowance()) {
        budget.refused++;
        return false;
      }
      budget.extra++;
      budget.granted++;
      budget.maxExtra = Math.max(budget.maxExtra, budget.extra);
      return true;
    },
    extraEnded() {
      budget.ended++;
      budget.extra--;
    },
  } satisfies AttemptBudget & Record<string, unknown>;
  return budget;
}
