import type { KindMetricFamilies, MetricFamilyDescriptor } from '../telemetry/metricFamily.js';

/**
 * The one table of metric families: `collectMetrics` builds its series from these entries,
 * prom-client registration and the OpenTelemetry instruments read their names, help and
 * units here, and the family table of docs/observability.md is generated from it
 * (`npm run docs:metrics`; a test fails while the committed doc differs). Counters become
 * OpenTelemetry observable counters; current amounts that add up across instances (states,
 * calls in flight, limits) observable up-down counters, as the semantic conventions ask.
 */

/** The `key` label of the series that sums the keys not reported one by one. */
export const OTHER_KEYS = '_other';
/** The `key` label of a keyed name's duration histogram, shared by all its keys. */
export const ALL_KEYS = '_all';

export const circuitBreakerFamilies = {
  state: {
    name: 'breakwater_circuit_breaker_state',
    type: 'gauge',
    help: `Circuit breaker state: 1 for the current state (for key="${OTHER_KEYS}": the number of keys in it).`,
    labels: ['name', 'key', 'state'],
    unit: '1',
    otel: { name: 'breakwater.circuit_breaker.state', kind: 'upDownCounter' },
  },
  calls: {
    name: 'breakwater_circuit_breaker_calls_total',
    type: 'counter',
    help: 'Calls a circuit breaker admitted, by outcome.',
    labels: ['name', 'key', 'outcome'],
    unit: '{call}',
    otel: { name: 'breakwater.circuit_breaker.calls', kind: 'counter' },
  },
  rejections: {
    name: 'breakwater_circuit_breaker_rejections_total',
    type: 'counter',
    help: 'Calls a circuit breaker refused, by the state that refused them.',
    labels: ['name', 'key', 'reason'],
    unit: '{call}',
    otel: { name: 'breakwater.circuit_breaker.rejections', kind: 'counter' },
  },
  transitions: {
    name: 'breakwater_circuit_breaker_transitions_total',
    type: 'counter',
    help: 'Circuit breaker state changes, by the state entered.',
    labels: ['name', 'key', 'to'],
    unit: '{transition}',
    otel: { name: 'breakwater.circuit_breaker.transitions', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

export const bulkheadFamilies = {
  inFlight: {
    name: 'breakwater_bulkhead_in_flight',
    type: 'gauge',
    help: 'Calls in flight.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.in_flight', kind: 'upDownCounter' },
  },
  queueLength: {
    name: 'breakwater_bulkhead_queue_length',
    type: 'gauge',
    help: 'Calls waiting in the queue.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.queue_length', kind: 'upDownCounter' },
  },
  maxConcurrent: {
    name: 'breakwater_bulkhead_max_concurrent',
    type: 'gauge',
    help: 'Calls allowed in flight at once.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.max_concurrent', kind: 'upDownCounter' },
  },
  admitted: {
    name: 'breakwater_bulkhead_admitted_total',
    type: 'counter',
    help: 'Calls a bulkhead admitted.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.admitted', kind: 'counter' },
  },
  rejections: {
    name: 'breakwater_bulkhead_rejections_total',
    type: 'counter',
    help: 'Calls a bulkhead refused, by reason.',
    labels: ['name', 'key', 'reason'],
    unit: '{call}',
    otel: { name: 'breakwater.bulkhead.rejections', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

export const rateLimiterFamilies = {
  permits: {
    name: 'breakwater_rate_limiter_permits_total',
    type: 'counter',
    help: 'Permit requests of a rate limiter, by result.',
    labels: ['name', 'key', 'result'],
    unit: '{permit}',
    otel: { name: 'breakwater.rate_limiter.permits', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

export const retryFamilies = {
  retries: {
    name: 'breakwater_retry_retries_total',
    type: 'counter',
    help: 'Retries a retry policy decided.',
    labels: ['name', 'key'],
    unit: '{retry}',
    otel: { name: 'breakwater.retry.retries', kind: 'counter' },
  },
  gaveUp: {
    name: 'breakwater_retry_gave_up_total',
    type: 'counter',
    help: 'Calls a retry policy gave up on: attempts or time used up, or a failure it does not retry after a retry.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.retry.gave_up', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

export const timeoutFamilies = {
  timeouts: {
    name: 'breakwater_timeout_timeouts_total',
    type: 'counter',
    help: 'Calls whose deadline passed.',
    labels: ['name', 'key'],
    unit: '{timeout}',
    otel: { name: 'breakwater.timeout.timeouts', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/**
 * The duration histogram every kind that keeps latency metrics reports into, with its `kind`
 * label. An observable OpenTelemetry instrument cannot be a histogram (that would record each
 * call), so OpenTelemetry gets the percentiles as a gauge.
 */
export const callDurationFamily = {
  name: 'breakwater_call_duration_seconds',
  type: 'histogram',
  help: 'Duration of the calls a policy admitted (sampled; see the metrics option).',
  labels: ['kind', 'name', 'key'],
  unit: 's',
  otel: {
    name: 'breakwater.call.duration',
    kind: 'gauge',
    description:
      'Percentiles of the durations of calls through circuit breakers and bulkheads that keep latency metrics, since the instance was made',
  },
} as const satisfies MetricFamilyDescriptor;

/** The families of each kind, in the order `collectMetrics` reports the kinds. */
export const KIND_FAMILIES: readonly KindMetricFamilies[] = [
  { kind: 'circuitBreaker', families: Object.values(circuitBreakerFamilies) },
  { kind: 'bulkhead', families: Object.values(bulkheadFamilies) },
  { kind: 'rateLimiter', families: Object.values(rateLimiterFamilies) },
  { kind: 'retry', families: Object.values(retryFamilies) },
  { kind: 'timeout', families: Object.values(timeoutFamilies) },
];

/**
 * @internal Every family `collectMetrics` can report, in the order it reports them. prom-client
 * needs a metric registered before the scrape that reports it, and OpenTelemetry an instrument
 * made before the callback that observes it, while `collectMetrics` leaves out families
 * without series (no bulkhead yet, no latency metrics): both read this list.
 */
export const METRIC_FAMILIES: readonly MetricFamilyDescriptor[] = [
  ...KIND_FAMILIES.flatMap((k) => k.families),
  callDurationFamily,
];
