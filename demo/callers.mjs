// @ts-check
/**
 * The two ways the demo calls the dependency: through a breakwater pipeline that serves a
 * fallback when the dependency cannot answer in time, and with a plain fetch and nothing else.
 */
import {
  bulkhead,
  circuitBreaker,
  fallback,
  isBrokenCircuitError,
  isBulkheadRejectedError,
  isTimeoutError,
  pipeline,
  retry,
  timeout,
} from 'breakwater';

/** @typedef {import('./load.mjs').Ending} Ending */

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
 * @returns {Promise<string>} The body.
 */
async function get(url, signal) {
  const response = await fetch(url, { signal });
  // Reading the body to the end hands the connection back to the pool.
  const body = await response.text();
  if (response.status >= 500) throw new HttpStatusError(response.status);
  return body;
}

/**
 * The protection's settings for callers who wait `deadline` ms for an answer, shown in the
 * demo's header.
 *
 * An attempt gets 60% of the deadline, and only quick failures (503s, dropped connections) are
 * retried, so a caller is answered within the deadline with room to spare for a busy event loop
 * (a timed-out attempt has used the caller's time; retrying it would also double the load after
 * a stall). Only failures open the breaker (a timed-out attempt is one), judged over the last 40
 * attempts once 20 were made. The demo's earlier settings (a 300 ms timeout, calls from 250 ms
 * counted slow, the last 20 calls judged once 10 were made) opened the breaker while the
 * dependency was healthy: on a busy machine the first calls (loading `fetch`, opening
 * connections) and the event loop's stalls took that long.
 * @param {{ deadline: number }} options
 */
export function protectionFor({ deadline }) {
  return Object.freeze({
    retry: { maxAttempts: 2, delay: 50 },
    timeout: Math.max(1, Math.round(deadline * 0.6)),
    bulkhead: { maxConcurrent: 20 },
    breaker: {
      window: /** @type {const} */ ({ kind: 'count', size: 40, minimumCalls: 20 }),
      failureRateThreshold: 0.5,
    },
  });
}

/**
 * Calls through `fallback -> retry -> circuit breaker -> timeout -> bulkhead`. The fallback
 * serves the last good answer (a cached one) whenever the rest fail: an open breaker or a full
 * bulkhead refused, attempts timed out, or the dependency kept failing.
 * @param {string} url
 * @param {{ breakDuration: number, deadline: number }} options `breakDuration`: how long the
 *   breaker stays open, in ms; `deadline`: how long callers wait, in ms.
 */
export function protectedCaller(url, { breakDuration, deadline }) {
  const settings = protectionFor({ deadline });
  // Latency metrics cost nothing the demo can measure and give the dashboard its percentiles.
  const metrics = { latency: true };
  const policies = {
    // A timed-out attempt has used most of the caller's time: only quick failures are retried.
    retry: retry({ ...settings.retry, handle: (error) => !isTimeoutError(error) }),
    breaker: circuitBreaker({ ...settings.breaker, breakDuration, metrics }),
    timeout: timeout(settings.timeout),
    bulkhead: bulkhead({ ...settings.bulkhead, metrics }),
  };
  let cached = 'nothing yet\n';
  const served = fallback({
    action: ({ error }) => ({ body: cached, error }),
  });
  const guarded = pipeline(
    served,
    policies.retry,
    policies.breaker,
    policies.timeout,
    policies.bulkhead,
  );
  return {
    breaker: policies.breaker,
    policies,
    settings,
    /** @returns {Promise<Ending>} */
    call: async () => {
      /** @type {{ body: string, error?: unknown }} */
      const answer = await guarded.execute(async ({ signal }) => ({
        body: await get(url, signal),
      }));
      if (answer.error === undefined) {
        cached = answer.body;
        return { outcome: 'ok' };
      }
      const refused = isBrokenCircuitError(answer.error) || isBulkheadRejectedError(answer.error);
      return { outcome: refused ? 'rejected' : 'failed', fallback: true };
    },
    dispose: () => guarded.dispose(),
  };
}

/**
 * Calls with a plain fetch: no timeout, no retry, no breaker, no fallback.
 * @param {string} url
 */
export function plainCaller(url) {
  return {
    /** @returns {Promise<Ending>} */
    call: () =>
      get(url).then(
        () => /** @type {Ending} */ ({ outcome: 'ok' }),
        () => /** @type {Ending} */ ({ outcome: 'failed' }),
      ),
  };
}
