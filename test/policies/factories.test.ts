import { describe, expect, it } from 'vitest';
import {
  AdaptiveLimit,
  adaptiveLimit,
  Bulkhead,
  bulkhead,
  CircuitBreaker,
  circuitBreaker,
  collectMetrics,
  eventLoopLoad,
  Fallback,
  fallback,
  Hedge,
  hedge,
  LoadShedder,
  loadShedder,
  logTransitions,
  OptionsError,
  RateLimiter,
  Retry,
  RetryBudget,
  rateLimiter,
  retry,
  retryBudget,
  Timeout,
  timeout,
} from '../../src/index.js';

// Plain JavaScript may pass arguments the types do not allow; each case is the factory called
// with valid options and one argument too many.
type Loose = (...args: unknown[]) => unknown;
const rate = { limit: 10, period: 1_000 };
const cases: [string, () => unknown][] = [
  ['timeout', () => (timeout as Loose)(2_000, 'aggressive')],
  [
    'new Timeout',
    () => new (Timeout as unknown as new (...a: unknown[]) => unknown)(2_000, 'aggressive'),
  ],
  ['circuitBreaker', () => (circuitBreaker as Loose)({}, { breakDuration: 5 })],
  [
    'new CircuitBreaker',
    () => new (CircuitBreaker as unknown as new (...a: unknown[]) => unknown)({}, 1),
  ],
  ['retry', () => (retry as Loose)({}, 3)],
  ['new Retry', () => new (Retry as unknown as new (...a: unknown[]) => unknown)({}, 3)],
  ['retryBudget', () => (retryBudget as Loose)({}, 0.1)],
  [
    'new RetryBudget',
    () => new (RetryBudget as unknown as new (...a: unknown[]) => unknown)({}, 0.1),
  ],
  ['bulkhead', () => (bulkhead as Loose)(8, 32)],
  ['new Bulkhead', () => new (Bulkhead as unknown as new (...a: unknown[]) => unknown)(8, 32)],
  ['fallback', () => (fallback as Loose)({ value: 1 }, 2)],
  [
    'new Fallback',
    () => new (Fallback as unknown as new (...a: unknown[]) => unknown)({ value: 1 }, 2),
  ],
  ['rateLimiter', () => (rateLimiter as Loose)(rate, 20)],
  [
    'new RateLimiter',
    () => new (RateLimiter as unknown as new (...a: unknown[]) => unknown)(rate, 20),
  ],
  ['loadShedder', () => (loadShedder as Loose)({}, 2)],
  [
    'new LoadShedder',
    () => new (LoadShedder as unknown as new (...a: unknown[]) => unknown)({}, 2),
  ],
  ['hedge', () => (hedge as Loose)({}, 100)],
  ['new Hedge', () => new (Hedge as unknown as new (...a: unknown[]) => unknown)({}, 100)],
  ['adaptiveLimit', () => (adaptiveLimit as Loose)({}, 'vegas')],
  [
    'new AdaptiveLimit',
    () => new (AdaptiveLimit as unknown as new (...a: unknown[]) => unknown)({}, 'vegas'),
  ],
  ['eventLoopLoad', () => (eventLoopLoad as Loose)({}, 100)],
  ['collectMetrics', () => (collectMetrics as Loose)(undefined, {}, 'extra')],
  ['logTransitions', () => (logTransitions as Loose)(circuitBreaker(), {}, 'extra')],
];

describe('factories and constructors from plain JavaScript', () => {
  it.each(cases)('%s refuses an argument it does not take with an OptionsError', (_name, call) => {
    let thrown: unknown;
    try {
      call();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(OptionsError);
    expect((thrown as OptionsError).message).toMatch(/argument/);
  });

  it('still builds from the arguments each takes, and ignores a trailing undefined', () => {
    expect((timeout as Loose)(2_000, undefined)).toBeInstanceOf(Timeout);
    expect(bulkhead(8)).toBeInstanceOf(Bulkhead);
    expect(retry()).toBeInstanceOf(Retry);
  });
});
