import type { RetryBudgetModel } from './options.js';

/**
 * Emitted when a budget refuses an extra attempt after granting the one before (or on its
 * first refusal): once per run of refusals, not for each refusal of a storm.
 */
export interface BudgetExhaustedEvent {
  readonly model: RetryBudgetModel;
  /** `stats().balance` when the refusal came. */
  readonly balance: number;
}
