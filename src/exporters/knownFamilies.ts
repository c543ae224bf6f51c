/** The name, type and help text of a metric family. */
export interface FamilyDescriptor {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly help: string;
}

/**
 * @internal Every family `collectMetrics` can report. prom-client needs a metric registered
 * before the scrape that reports it, while `collectMetrics` leaves out families without
 * series (no bulkhead yet, no latency metrics), so the list is kept here; the help texts are
 * those of `collectMetrics`, used while a family has no series.
 */
export const KNOWN_FAMILIES: readonly FamilyDescriptor[] = [
  {
    name: 'breakwater_circuit_breaker_state',
    type: 'gauge',
    help: 'Circuit breaker state: 1 for the current state (for key="_other": the number of keys in it).',
  },
  {
    name: 'breakwater_circuit_breaker_calls_total',
    type: 'counter',
    help: 'Calls a circuit breaker admitted, by outcome.',
  },
  {
    name: 'breakwater_circuit_breaker_rejections_total',
    type: 'counter',
    help: 'Calls a circuit breaker refused, by the state that refused them.',
  },
  {
    name: 'breakwater_circuit_breaker_transitions_total',
    type: 'counter',
    help: 'Circuit breaker state changes, by the state entered.',
  },
  { name: 'breakwater_bulkhead_in_flight', type: 'gauge', help: 'Calls in flight.' },
  { name: 'breakwater_bulkhead_queue_length', type: 'gauge', help: 'Calls waiting in the queue.' },
  {
    name: 'breakwater_bulkhead_max_concurrent',
    type: 'gauge',
    help: 'Calls allowed in flight at once.',
  },
  {
    name: 'breakwater_bulkhead_admitted_total',
    type: 'counter',
    help: 'Calls a bulkhead admitted.',
  },
  {
    name: 'breakwater_bulkhead_rejections_total',
    type: 'counter',
    help: 'Calls a bulkhead refused, by reason.',
  },
  {
    name: 'breakwater_rate_limiter_permits_total',
    type: 'counter',
    help: 'Permit requests of a rate limiter, by result.',
  },
  {
    name: 'breakwater_retry_retries_total',
    type: 'counter',
    help: 'Retries a retry policy decided.',
  },
  {
    name: 'breakwater_retry_gave_up_total',
    type: 'counter',
    help: 'Calls a retry policy gave up on: attempts or time used up, or a failure it does not retry after a retry.',
  },
  {
    name: 'breakwater_timeout_timeouts_total',
    type: 'counter',
    help: 'Calls whose deadline passed.',
  },
  {
    name: 'breakwater_call_duration_seconds',
    type: 'histogram',
    help: 'Duration of the calls a policy admitted (sampled; see the metrics option).',
  },
];
