import type { Meter } from '@opentelemetry/api';
import { OptionsError } from '../errors/OptionsError.js';
import type { Disposer } from '../events/Listeners.js';
import { defaultRegistry, type Registry } from '../registry/Registry.js';
import { checkOptionsObject } from '../validation/validate.js';
import { type OpenTelemetryMetricsOptions, observeBreakwaterMetrics } from './observeMetrics.js';
import { traceBreakwaterEvents } from './spanEvents.js';

/** Options of {@link instrumentBreakwater}. */
export interface InstrumentOptions {
  /** The meter to report the registry's metrics through; no metrics without one. */
  readonly meter?: Meter;
  /**
   * The registry whose metrics are reported (with `meter`).
   * @default defaultRegistry, which lists the named policies built in code
   */
  readonly registry?: Registry;
  /** Options of the metrics (see {@link observeBreakwaterMetrics}). */
  readonly collect?: OpenTelemetryMetricsOptions;
  /**
   * Add span events for retries, rejections and breaker state changes to the active span
   * (see {@link traceBreakwaterEvents}). They concern every policy of the process, not only
   * those of `registry`.
   * @default true
   */
  readonly tracing?: boolean;
}

/**
 * Metrics of a registry ({@link observeBreakwaterMetrics}) and span events
 * ({@link traceBreakwaterEvents}) in one call. Throws {@link OptionsError} for an invalid
 * option.
 *
 * @returns a function that stops both.
 *
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * import { instrumentBreakwater } from 'breakwater/opentelemetry';
 *
 * const stop = instrumentBreakwater({ meter: metrics.getMeter('breakwater'), registry });
 * process.once('SIGTERM', stop);
 * ```
 */
export function instrumentBreakwater(options: InstrumentOptions): Disposer {
  const o = checkOptionsObject(
    options,
    ['meter', 'registry', 'collect', 'tracing'],
    '',
  ) as InstrumentOptions;
  if (options === undefined) throw new OptionsError('options', options, 'an options object');
  const tracing = o.tracing ?? true;
  if (typeof tracing !== 'boolean') throw new OptionsError('tracing', tracing, 'a boolean');
  if (o.meter === undefined && o.registry !== undefined) {
    throw new OptionsError('meter', o.meter, 'an OpenTelemetry Meter when `registry` is given');
  }
  let stopMetrics: Disposer | undefined;
  if (o.meter !== undefined) {
    try {
      stopMetrics = observeBreakwaterMetrics(o.meter, o.registry ?? defaultRegistry, o.collect);
    } catch (error) {
      // Errors in `collect` are named by their path from here.
      if (!(error instanceof OptionsError) || ['meter', 'registry'].includes(error.option)) {
        throw error;
      }
      const path = error.option === 'options' ? 'collect' : `collect.${error.option}`;
      throw new OptionsError(path, error.value, error.expected);
    }
  }
  const stopTracing = tracing ? traceBreakwaterEvents() : undefined;
  return () => {
    stopMetrics?.();
    stopTracing?.();
  };
}
