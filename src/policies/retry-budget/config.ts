import {
  type ConfigSchema,
  configSchema,
  type Duration,
  type OptionsData,
} from '../../protocol/kind.js';
import { MODEL_OPTIONS, type RetryBudgetModel } from './options.js';

/** A retry budget's options as config data (each model takes only its own). */
export interface RetryBudgetConfig {
  readonly model?: RetryBudgetModel;
  readonly window?: Duration;
  readonly ratio?: number;
  readonly minRetriesPerSecond?: number;
  readonly maxTokens?: number;
  readonly tokenRatio?: number;
  readonly minRetryConcurrency?: number;
}

/** @internal The keys of a retry budget's options in config data. */
export const retryBudgetSchema: ConfigSchema = configSchema([
  ['model', 'value'],
  ['window', 'duration'],
  ['ratio', 'value'],
  ['minRetriesPerSecond', 'value'],
  ['maxTokens', 'value'],
  ['tokenRatio', 'value'],
  ['minRetryConcurrency', 'value'],
]);

/**
 * @internal A named entry of another model than the defaults' keeps none of the defaults'
 * options its model does not take (`window` under `defaults.retryBudget` and a `tokens` entry).
 */
export function mergeRetryBudget(
  defaults: OptionsData,
  named: OptionsData,
  merged: OptionsData,
): void {
  const model = MODEL_OPTIONS.get(named.model as RetryBudgetModel);
  if (model === undefined || named.model === defaults.model) return;
  for (const key of Object.keys(defaults)) {
    if (key !== 'model' && !model.includes(key) && !Object.hasOwn(named, key)) delete merged[key];
  }
}
