/** The OpenTelemetry instrument kinds breakwater reports through. */
export type InstrumentKind = 'counter' | 'upDownCounter' | 'gauge';

/** How one metric family of `collectMetrics` is reported to OpenTelemetry. */
export interface InstrumentName {
  /** The instrument's name, in the OpenTelemetry style (dots, no unit, no `_total`). */
  readonly name: string;
  readonly kind: InstrumentKind;
  /** UCUM unit, as OpenTelemetry semantic conventions write it. */
  readonly unit: string;
}

/**
 * The OpenTelemetry name of each Prometheus-style family of `collectMetrics`. Counters become
 * observable counters; current amounts that add up across instances (states, calls in flight,
 * limits) observable up-down counters, as the semantic conventions ask for such values.
 */
export const otelInstruments: Readonly<Record<string, InstrumentName>> = {
  breakwater_circuit_breaker_state: {
    name: 'breakwater.circuit_breaker.state',
    kind: 'upDownCounter',
    unit: '1',
  },
  breakwater_circuit_breaker_calls_total: {
    name: 'breakwater.circuit_breaker.calls',
    kind: 'counter',
    unit: '{call}',
  },
  breakwater_circuit_breaker_rejections_total: {
    name: 'breakwater.circuit_breaker.rejections',
    kind: 'counter',
    unit: '{call}',
  },
  breakwater_circuit_breaker_transitions_total: {
    name: 'breakwater.circuit_breaker.transitions',
    kind: 'counter',
    unit: '{transition}',
  },
  breakwater_bulkhead_in_flight: {
    name: 'breakwater.bulkhead.in_flight',
    kind: 'upDownCounter',
    unit: '{call}',
  },
  breakwater_bulkhead_queue_length: {
    name: 'breakwater.bulkhead.queue_length',
    kind: 'upDownCounter',
    unit: '{call}',
  },
  breakwater_bulkhead_max_concurrent: {
    name: 'breakwater.bulkhead.max_concurrent',
    kind: 'upDownCounter',
    unit: '{call}',
  },
  breakwater_bulkhead_admitted_total: {
    name: 'breakwater.bulkhead.admitted',
    kind: 'counter',
    unit: '{call}',
  },
  breakwater_bulkhead_rejections_total: {
    name: 'breakwater.bulkhead.rejections',
    kind: 'counter',
    unit: '{call}',
  },
  breakwater_rate_limiter_permits_total: {
    name: 'breakwater.rate_limiter.permits',
    kind: 'counter',
    unit: '{permit}',
  },
  breakwater_retry_retries_total: {
    name: 'breakwater.retry.retries',
    kind: 'counter',
    unit: '{retry}',
  },
  breakwater_retry_gave_up_total: {
    name: 'breakwater.retry.gave_up',
    kind: 'counter',
    unit: '{call}',
  },
  breakwater_timeout_timeouts_total: {
    name: 'breakwater.timeout.timeouts',
    kind: 'counter',
    unit: '{timeout}',
  },
  // An observable instrument cannot be a histogram: the latency percentiles are a gauge.
  breakwater_call_duration_seconds: {
    name: 'breakwater.call.duration',
    kind: 'gauge',
    unit: 's',
  },
};

/** Attribute names of the label names `collectMetrics` uses; other labels keep their name. */
export const otelAttributeNames: Readonly<Record<string, string>> = {
  name: 'breakwater.policy.name',
  key: 'breakwater.key',
  kind: 'breakwater.policy.kind',
};
