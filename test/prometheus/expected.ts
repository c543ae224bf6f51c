/** Every series of the scenario in ./scenario.ts, before `finish()`: [family, labels, value]. */
export const SCENARIO_SERIES: readonly [string, Record<string, string>, number][] = [
  ...['closed', 'open', 'half-open', 'disabled', 'forced-open', 'metrics-only'].map(
    (state) =>
      [
        'breakwater_circuit_breaker_state',
        { name: 'payments', key: '', state },
        state === 'open' ? 1 : 0,
      ] as [string, Record<string, string>, number],
  ),
  ['breakwater_circuit_breaker_calls_total', { name: 'payments', key: '', outcome: 'success' }, 1],
  ['breakwater_circuit_breaker_calls_total', { name: 'payments', key: '', outcome: 'failure' }, 2],
  ['breakwater_circuit_breaker_calls_total', { name: 'payments', key: '', outcome: 'ignored' }, 0],
  ['breakwater_circuit_breaker_rejections_total', { name: 'payments', key: '', reason: 'open' }, 1],
  [
    'breakwater_circuit_breaker_rejections_total',
    { name: 'payments', key: '', reason: 'half-open' },
    0,
  ],
  [
    'breakwater_circuit_breaker_rejections_total',
    { name: 'payments', key: '', reason: 'forced-open' },
    0,
  ],
  ...['closed', 'open', 'half-open', 'disabled', 'forced-open', 'metrics-only'].map(
    (to) =>
      [
        'breakwater_circuit_breaker_transitions_total',
        { name: 'payments', key: '', to },
        to === 'open' ? 1 : 0,
      ] as [string, Record<string, string>, number],
  ),
  ['breakwater_bulkhead_in_flight', { name: 'db', key: '' }, 2],
  ['breakwater_bulkhead_queue_length', { name: 'db', key: '' }, 0],
  ['breakwater_bulkhead_max_concurrent', { name: 'db', key: '' }, 2],
  ['breakwater_bulkhead_admitted_total', { name: 'db', key: '' }, 2],
  ['breakwater_bulkhead_rejections_total', { name: 'db', key: '', reason: 'full' }, 1],
  ['breakwater_bulkhead_rejections_total', { name: 'db', key: '', reason: 'queue-timeout' }, 1],
  ['breakwater_rate_limiter_permits_total', { name: 'search', key: '', result: 'admitted' }, 2],
  ['breakwater_rate_limiter_permits_total', { name: 'search', key: '', result: 'rejected' }, 1],
  ['breakwater_retry_retries_total', { name: 'pay-retry', key: '' }, 2],
  ['breakwater_retry_gave_up_total', { name: 'pay-retry', key: '' }, 1],
  ['breakwater_retry_budget_calls_total', { name: 'pay-budget', key: '' }, 1],
  ['breakwater_retry_budget_attempts_total', { name: 'pay-budget', key: '', result: 'allowed' }, 2],
  ['breakwater_retry_budget_attempts_total', { name: 'pay-budget', key: '', result: 'refused' }, 0],
  ['breakwater_retry_budget_balance', { name: 'pay-budget', key: '' }, 7],
  ['breakwater_timeout_timeouts_total', { name: 'report', key: '' }, 1],
  ['breakwater_load_shedder_admitted_total', { name: 'api-shed', key: '' }, 1],
  ...(['sheddable', 'sheddable-plus', 'critical', 'critical-plus'] as const).map(
    (criticality) =>
      [
        'breakwater_load_shedder_refused_total',
        { name: 'api-shed', key: '', criticality },
        criticality === 'critical' ? 1 : 0,
      ] as [string, Record<string, string>, number],
  ),
  // Two requests in the window, none accepted: (2 - 2 × 0) / (2 + 1).
  ['breakwater_load_shedder_refusal_rate', { name: 'api-shed', key: '' }, 2 / 3],
  ['breakwater_adaptive_limit_limit', { name: 'api-limit', key: '' }, 2],
  ['breakwater_adaptive_limit_in_flight', { name: 'api-limit', key: '' }, 0],
  ['breakwater_adaptive_limit_queue_length', { name: 'api-limit', key: '' }, 0],
  ['breakwater_adaptive_limit_recent_latency_seconds', { name: 'api-limit', key: '' }, 0.02],
  ['breakwater_adaptive_limit_baseline_latency_seconds', { name: 'api-limit', key: '' }, 0.02],
  ['breakwater_adaptive_limit_admitted_total', { name: 'api-limit', key: '' }, 1],
  ...(['limit', 'queue-timeout', 'codel', 'deadline'] as const).map(
    (reason) =>
      [
        'breakwater_adaptive_limit_rejections_total',
        { name: 'api-limit', key: '', reason },
        reason === 'limit' ? 1 : 0,
      ] as [string, Record<string, string>, number],
  ),
  ...(['answered', 'dropped', 'ignored'] as const).map(
    (outcome) =>
      [
        'breakwater_adaptive_limit_samples_total',
        { name: 'api-limit', key: '', outcome },
        outcome === 'answered' ? 1 : 0,
      ] as [string, Record<string, string>, number],
  ),
  ['breakwater_hedge_calls_total', { name: 'fetch-hedge', key: '' }, 1],
  ['breakwater_hedge_hedges_total', { name: 'fetch-hedge', key: '' }, 1],
  ['breakwater_hedge_won_total', { name: 'fetch-hedge', key: '' }, 1],
  ['breakwater_hedge_refused_total', { name: 'fetch-hedge', key: '' }, 0],
  ['breakwater_coalesce_calls_total', { name: 'user-load', key: '' }, 4],
  ['breakwater_coalesce_flights_total', { name: 'user-load', key: '' }, 2],
  ['breakwater_coalesce_coalesced_total', { name: 'user-load', key: '' }, 2],
  ['breakwater_coalesce_abandoned_total', { name: 'user-load', key: '' }, 1],
  ['breakwater_coalesce_in_flight', { name: 'user-load', key: '' }, 0],
  ['breakwater_chaos_calls_total', { name: 'api-chaos', key: '' }, 4],
  ['breakwater_chaos_injections_total', { name: 'api-chaos', key: '', strategy: 'fault' }, 2],
  ['breakwater_chaos_capped_total', { name: 'api-chaos', key: '' }, 0],
  ['breakwater_chaos_real_failures_total', { name: 'api-chaos', key: '' }, 1],
  ['breakwater_chaos_active', { name: 'api-chaos', key: '' }, 0],
];

/** Default bucket bounds of `breakwater_call_duration_seconds`. */
export const DEFAULT_BOUNDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Cumulative counts of the breaker's 3 ms, 20 ms and 20 ms calls at DEFAULT_BOUNDS. */
export const PAYMENTS_BUCKETS = [0, 0, 0, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3];
