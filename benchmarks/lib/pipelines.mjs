/** Pipelines shared by a scenario and its polluted variant, so both measure the same thing. */
import { bulkhead, circuitBreaker, pipeline, retry, timeout } from './breakwater.mjs';

/** `pipeline(circuitBreaker({ window: { kind: 'consecutive', threshold: 5 } }))`. */
export const breakerPipeline = () =>
  pipeline(circuitBreaker({ window: { kind: 'consecutive', threshold: 5 } }));

/** retry(3) -> breaker (consecutive 5) -> timeout(1000, cooperative) -> bulkhead(100), outer to inner. */
export const composedPipeline = () =>
  pipeline(
    retry({ maxAttempts: 3 }),
    circuitBreaker({ window: { kind: 'consecutive', threshold: 5 } }),
    timeout({ timeout: 1000, strategy: 'cooperative' }),
    bulkhead(100),
  );
