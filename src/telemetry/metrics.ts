import { OptionsError } from '../errors/OptionsError.js';
import { checkOptionsObject, join } from '../validation/validate.js';

/**
 * What a policy instance reports to metric exporters (`collectMetrics`, Prometheus,
 * OpenTelemetry, the dashboard). The counters behind `stats()` are kept whatever this says:
 * each is one increment.
 */
export interface MetricsOptions {
  /**
   * Keep a latency histogram of the calls the policy admits (circuit breakers and bulkheads).
   * Timing a call reads the clock twice (about 50 ns each on Node), so on the system clock one
   * call in `n` is timed: `true` times one call in 16, a number `n` one in `n` (1: every call).
   * With a clock whose readings are cheap (`ManualClock`) every call is timed. Calls are timed
   * anyway, and all recorded, when a pipeline needs their duration (a slow-call threshold).
   * @default false
   */
  readonly latency?: boolean | number;
}

/** The `metrics` option after defaults and checks. */
export interface ResolvedMetrics {
  /** False: the instance is left out of metric exports. */
  readonly enabled: boolean;
  /** Time one call in this many; 0 keeps no latency histogram. */
  readonly latencyEvery: number;
}

/** Calls timed per sampled one when `latency: true`. */
export const DEFAULT_LATENCY_EVERY = 16;
const MAX_LATENCY_EVERY = 1 << 20;

const METRICS_DEFAULTS: ResolvedMetrics = { enabled: true, latencyEvery: 0 };
const METRICS_OFF: ResolvedMetrics = { enabled: false, latencyEvery: 0 };
/** The option left out: the defaults, and for `reconfigure`, "keep what the policy has". */
const METRICS_UNSET: ResolvedMetrics = { enabled: true, latencyEvery: 0 };

/** @internal Reads the `metrics` option: a boolean or {@link MetricsOptions}. */
export function resolveMetrics(value: unknown, path = 'metrics'): ResolvedMetrics {
  if (value === undefined) return METRICS_UNSET;
  if (value === true) return METRICS_DEFAULTS;
  if (value === false) return METRICS_OFF;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError(path, value, 'a boolean or an object such as { latency: true }');
  }
  const o = checkOptionsObject(value, ['latency'], path) as MetricsOptions;
  const latency = o.latency;
  if (latency === undefined || latency === false) return METRICS_DEFAULTS;
  if (latency === true) return { enabled: true, latencyEvery: DEFAULT_LATENCY_EVERY };
  if (
    typeof latency === 'number' &&
    Number.isInteger(latency) &&
    latency >= 1 &&
    latency <= MAX_LATENCY_EVERY
  ) {
    return { enabled: true, latencyEvery: latency };
  }
  throw new OptionsError(
    join(path, 'latency'),
    latency,
    `a boolean or an integer in [1, ${MAX_LATENCY_EVERY}] (time one call in that many)`,
  );
}

/**
 * @internal Throws {@link OptionsError} when `reconfigure` would change the metrics a policy
 * was built with (pipelines decide when they are built whether to time calls for it). Left
 * out, they are kept.
 */
export function checkMetricsKept(kept: ResolvedMetrics, next: ResolvedMetrics): void {
  if (next === METRICS_UNSET) return;
  if (next.enabled !== kept.enabled || next.latencyEvery !== kept.latencyEvery) {
    throw new OptionsError(
      'metrics',
      next.enabled ? { latency: next.latencyEvery } : false,
      `left out or as built (${kept.enabled ? `{ latency: ${kept.latencyEvery} }` : 'false'}): metrics are set when a policy is built; build a new one`,
    );
  }
}
