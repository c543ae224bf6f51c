import { expect, it } from 'vitest';
import { OptionsError, pipeline, Registry, retryBudget, UsageError } from '../../../src/index.js';

it('is not a step: a pipeline refuses a retry budget, and the registry keeps budgets by name only', () => {
  expect(() => pipeline(retryBudget() as never)).toThrow(OptionsError);
  const registry = new Registry();
  expect(() => registry.keyed('retryBudget', 'x')).toThrow(UsageError);
});
