import type { KindMetrics } from '../../protocol/kind.js';
import { type MetricFamilyDescriptor, OTHER_KEYS } from '../../telemetry/metricFamily.js';
import { type CircuitBreaker, controllerOf } from './CircuitBreaker.js';
import { BreakerCounts } from './counts.js';
import { STATE_NAMES } from './state.js';

/** The metric families of circuit breakers. */
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

const f = circuitBreakerFamilies;

/** @internal How breakers report into their families. */
export const breakerMetrics: KindMetrics<CircuitBreaker, BreakerCounts> = {
  families: Object.values(f),
  enabled: (b) => controllerOf(b).options.metrics.enabled,
  latency: (b) => controllerOf(b).latency,
  counts: () => new BreakerCounts(),
  add: (c, b) => c.addBreaker(b),
  addCounts: (c, other) => c.addTotals(other),
  isEmpty: (c) => c.isEmpty(),
  series(sink, name, key, c) {
    STATE_NAMES.forEach((state, i) => {
      sink.add(f.state, { name, key, state }, c.inState[i]!);
    });
    sink.add(f.calls, { name, key, outcome: 'success' }, c.successes);
    sink.add(f.calls, { name, key, outcome: 'failure' }, c.failures);
    sink.add(f.calls, { name, key, outcome: 'ignored' }, c.ignored);
    sink.add(f.rejections, { name, key, reason: 'open' }, c.rejectedOpen);
    sink.add(f.rejections, { name, key, reason: 'half-open' }, c.rejectedHalfOpen);
    sink.add(f.rejections, { name, key, reason: 'forced-open' }, c.rejectedForced);
    STATE_NAMES.forEach((to, i) => {
      sink.add(f.transitions, { name, key, to }, c.transitionsTo[i]!);
    });
  },
};
