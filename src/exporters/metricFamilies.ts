import type { AnyPolicyKind } from '../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../telemetry/metricFamily.js';

/**
 * The metric families no single kind owns. Each kind declares its own families in its
 * descriptor (`kind.metrics.families`): `collectMetrics` builds their series, prom-client
 * registration and the OpenTelemetry instruments read their names, help and units there, and
 * the family table of docs/observability.md is generated from the library's kinds
 * (`npm run docs:metrics`; a test fails while the committed doc differs). Counters become
 * OpenTelemetry observable counters; current amounts that add up across instances (states,
 * calls in flight, limits) observable up-down counters, as the semantic conventions ask.
 */

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
      'Percentiles of the durations of calls through policies that keep latency metrics, since the instance was made',
  },
} as const satisfies MetricFamilyDescriptor;

/**
 * Errors thrown by event listeners and by functions given as options (`handle`,
 * `handleResult`, `retryAfter`, ...), which the library catches and hands to the listener
 * error handler: counted for the whole process, whatever the registry, and reported from the
 * first error of each source on (so a registry with nothing to show still renders nothing).
 */
export const callbackErrorsFamily = {
  name: 'breakwater_callback_errors_total',
  type: 'counter',
  help: 'Errors thrown by event listeners (source="listener") and by functions given as options (source="callback"), caught by the library.',
  labels: ['source'],
  unit: '{error}',
  otel: { name: 'breakwater.callback.errors', kind: 'counter' },
} as const satisfies MetricFamilyDescriptor;

/**
 * @internal Every family `collectMetrics` can report for a registry of `kinds`: the families
 * of each kind in the order of the kinds, then the call duration histogram, then the errors of
 * listeners and callbacks. prom-client needs
 * a metric registered before the scrape that reports it, and OpenTelemetry an instrument made
 * before the callback that observes it, while `collectMetrics` leaves out families without
 * series (no instance of a kind yet, no latency metrics): both read this list. A family
 * two kinds share (the permits of both rate limiters) is listed once.
 */
export function metricFamiliesOf(kinds: readonly AnyPolicyKind[]): MetricFamilyDescriptor[] {
  const families = new Set<MetricFamilyDescriptor>();
  for (const kind of kinds) for (const f of kind.metrics?.families ?? []) families.add(f);
  families.add(callDurationFamily);
  families.add(callbackErrorsFamily);
  return [...families];
}
