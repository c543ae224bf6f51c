// @ts-check
/**
 * The two ways the demo calls the dependency: through a breakwater pipeline, and with a plain
 * fetch and nothing else.
 */
import {
  bulkhead,
  circuitBreaker,
  isBrokenCircuitError,
  isBulkheadRejectedError,
  pipeline,
  retry,
  timeout,
} from 'breakwater';

/** @typedef {import('./report.mjs').Outcome} Outcome */

/** An HTTP answer with a 5xx status: the dependency failed even though it answered. */
export class HttpStatusError extends Error {
  /** @param {number} status */
  constructor(status) {
    super(`HTTP ${status}`);
    this.name = 'HttpStatusError';
    this.status = status;
  }
}

/**
 * One GET; a 5xx answer throws, so every policy sees it as a failure.
 * @param {string} url
 * @param {AbortSignal} [signal]
 * @returns {Promise<number>} The status.
 */
async function get(url, signal) {
  const response = await fetch(url, { signal });
  // Reading the body to the end hands the connection back to the pool.
  await response.arrayBuffer();
  if (response.status >= 500) throw new HttpStatusError(response.status);
  return response.status;
}

/** The protection's settings, shown in the demo's header. */
export const protection = Object.freeze({
  retry: { maxAttempts: 2, delay: 50 },
  timeout: 300,
  bulkhead: { maxConcurrent: 20 },
  breaker: {
    window: /** @type {const} */ ({ kind: 'count', size: 20, minimumCalls: 10 }),
    failureRateThreshold: 0.5,
    // Below the timeout, so calls that get close to it already count as slow.
    slowCallDuration: 250,
    slowCallRateThreshold: 0.5,
  },
});

/**
 * Calls through `retry -> circuit breaker -> timeout -> bulkhead`.
 * @param {string} url
 * @param {{ breakDuration: number }} options How long the breaker stays open, in ms.
 */
export function protectedCaller(url, { breakDuration }) {
  // Latency metrics cost nothing the demo can measure and give the dashboard its percentiles.
  const metrics = { latency: true };
  const policies = {
    retry: retry(protection.retry),
    breaker: circuitBreaker({ ...protection.breaker, breakDuration, metrics }),
    timeout: timeout(protection.timeout),
    bulkhead: bulkhead({ ...protection.bulkhead, metrics }),
  };
  const guarded = pipeline(policies.retry, policies.breaker, policies.timeout, policies.bulkhead);
  return {
    breaker: policies.breaker,
    policies,
    /** @returns {Promise<Outcome>} */
    call: async () => {
      const result = await guarded.tryExecute(({ signal }) => get(url, signal));
      if (result.ok) return 'ok';
      // A timeout is a refusal too, but the request did reach the dependency: a failure.
      return isBrokenCircuitError(result.error) || isBulkheadRejectedError(result.error)
        ? 'rejected'
        : 'failed';
    },
    dispose: () => guarded.dispose(),
  };
}

/**
 * Calls with a plain fetch: no timeout, no retry, no breaker.
 * @param {string} url
 */
export function plainCaller(url) {
  return {
    /** @returns {Promise<Outcome>} */
    call: () =>
      get(url).then(
        () => /** @type {Outcome} */ ('ok'),
        () => /** @type {Outcome} */ ('failed'),
      ),
  };
}
