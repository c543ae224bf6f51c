import { AdaptiveLimit } from './adaptive-limit/AdaptiveLimit.js';
import { Bulkhead } from './bulkhead/Bulkhead.js';
import { CircuitBreaker } from './circuit-breaker/CircuitBreaker.js';
import { Hedge } from './hedge/Hedge.js';
import type { LibraryKindTypes, StepKindName } from './kindTable.js';
import { LoadShedder } from './load-shedder/LoadShedder.js';
import { RateLimiter } from './rate-limiter/RateLimiter.js';
import { Retry } from './retry/Retry.js';
import { Timeout } from './timeout/Timeout.js';

/**
 * The class of each library kind that is a step, for the pipeline builder: the classes alone,
 * not the descriptors (config schemas, metrics, views), so that a bundle with the builder
 * carries no more than its policies. The compiler holds it to the kind table.
 */
export const STEP_CLASSES: {
  readonly [K in StepKindName]: new (
    options: LibraryKindTypes[K]['options'],
  ) => LibraryKindTypes[K]['policy'];
} = {
  circuitBreaker: CircuitBreaker,
  retry: Retry,
  timeout: Timeout,
  bulkhead: Bulkhead,
  rateLimiter: RateLimiter,
  loadShedder: LoadShedder,
  adaptiveLimit: AdaptiveLimit,
  hedge: Hedge,
};
