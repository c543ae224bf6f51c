/**
 * OpenTelemetry for breakwater through `@opentelemetry/api` (an optional peer dependency):
 * a registry's metrics as observable instruments, and span events on the active span for
 * retries, rejections and circuit breaker state changes. Names, attributes and units are
 * listed in docs/observability.md.
 *
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * import { instrumentBreakwater } from 'breakwater/opentelemetry';
 *
 * const stop = instrumentBreakwater({ meter: metrics.getMeter('breakwater'), registry });
 * ```
 * @packageDocumentation
 */
export { type InstrumentOptions, instrumentBreakwater } from './instrumentBreakwater.js';
export {
  type InstrumentKind,
  type InstrumentName,
  otelAttributeNames,
  otelInstruments,
} from './names.js';
export { type OpenTelemetryMetricsOptions, observeBreakwaterMetrics } from './observeMetrics.js';
export { spanEventNames, type TraceEventsOptions, traceBreakwaterEvents } from './spanEvents.js';
