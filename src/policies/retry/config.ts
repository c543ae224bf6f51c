import { type ConfigSchema, configSchema, type Duration } from '../../protocol/kind.js';
import type { BackoffKind, JitterKind } from './options.js';

/** A retry policy's options as config data. `"Infinity"` is accepted where `Infinity` is. */
export interface RetryConfig {
  readonly maxAttempts?: number | 'Infinity';
  readonly maxDuration?: Duration;
  readonly backoff?: BackoffKind;
  readonly delay?: Duration;
  readonly maxDelay?: Duration;
  readonly multiplier?: number;
  readonly jitter?: JitterKind;
  /**
   * The name of the retry budget its retries spend from (an entry of `retryBudgets`, or a name
   * that takes `defaults.retryBudget`): every retry naming it shares that one budget.
   */
  readonly budget?: string;
}

/** @internal The keys of a retry policy's options in config data. */
export const retrySchema: ConfigSchema = configSchema([
  ['maxAttempts', 'countOrInfinity'],
  ['maxDuration', 'durationOrInfinity'],
  ['backoff', 'value'],
  ['delay', 'duration'],
  ['maxDelay', 'duration'],
  ['multiplier', 'value'],
  ['jitter', 'value'],
  ['budget', { reference: 'retryBudget' }],
]);
