import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import { OTHER_KEYS } from '../../telemetry/metricFamily.js';
import { type CircuitBreaker, controllerOf } from './CircuitBreaker.js';
import { BreakerCounts } from './counts.js';
import { STATE_NAMES } from './state.js';

const declared = declareMetrics<
  CircuitBreaker,
  BreakerCounts,
  'state' | 'calls' | 'rejections' | 'transitions'
>({
  prefix: 'circuit_breaker',
  readings: {
    state: gauge(
      '1',
      `Circuit breaker state: 1 for the current state (for key="${OTHER_KEYS}": the number of keys in it).`,
      { label: 'state', values: STATE_NAMES, array: 'inState' },
    ),
    calls: counter('{call}', 'Calls a circuit breaker admitted, by outcome.', {
      label: 'outcome',
      fields: { success: 'successes', failure: 'failures', ignored: 'ignored' },
    }),
    rejections: counter(
      '{call}',
      'Calls a circuit breaker refused, by the state that refused them.',
      {
        label: 'reason',
        fields: {
          open: 'rejectedOpen',
          'half-open': 'rejectedHalfOpen',
          'forced-open': 'rejectedForced',
        },
      },
    ),
    transitions: counter('{transition}', 'Circuit breaker state changes, by the state entered.', {
      label: 'to',
      values: STATE_NAMES,
      array: 'transitionsTo',
    }),
  },
  counts: () => new BreakerCounts(),
  read: (c, b) => c.addBreaker(b),
  enabled: (b) => controllerOf(b).options.metrics.enabled,
  latency: (b) => controllerOf(b).latency,
});

/** The metric families of circuit breakers. */
export const circuitBreakerFamilies = declared.families;
/** @internal How breakers report into their families. */
export const breakerMetrics = declared.metrics;
