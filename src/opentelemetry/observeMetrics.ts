import type {
  Attributes,
  BatchObservableResult,
  Meter,
  MetricOptions,
  Observable,
} from '@opentelemetry/api';
import { OptionsError } from '../errors/OptionsError.js';
import type { Disposer } from '../events/Listeners.js';
import { checkRegistry, collectMetrics } from '../exporters/collect.js';
import type { CollectOptions, HistogramFamily, MetricLabels } from '../exporters/families.js';
import { metricFamiliesOf } from '../exporters/metricFamilies.js';
import type { RegistryInstances } from '../registry/instances.js';
import { defaultRegistry, type Registry } from '../registry/Registry.js';
import type { LatencyHistogram } from '../telemetry/LatencyHistogram.js';
import { hasMethods } from '../validation/validate.js';
import { otelAttributeNames } from './names.js';

/**
 * Options of {@link observeBreakwaterMetrics}: those of `collectMetrics`.
 * - `maxKeysPerName` (default 20): keys of one keyed name reported one by one; the others
 *   are summed into one series with `breakwater.key` = `_other`.
 * - `durationBuckets`: not used by OpenTelemetry, which reports percentiles.
 */
export type OpenTelemetryMetricsOptions = CollectOptions;

/** The quantiles of `breakwater.call.duration`, as its `quantile` attribute writes them. */
const QUANTILES = [
  ['0.5', 0.5],
  ['0.9', 0.9],
  ['0.99', 0.99],
  ['0.999', 0.999],
] as const;

/**
 * Reports the metrics of a breakwater registry through OpenTelemetry observable instruments
 * made on `meter`: one batch callback reads the registry's counters once per collection, so
 * nothing is added to the calls themselves. Names, attributes and units are listed in
 * docs/observability.md; they follow the OpenTelemetry semantic conventions (dots, units in
 * `unit`, no `_total`): e.g. `breakwater.circuit_breaker.calls` with attributes
 * `breakwater.policy.name`, `breakwater.key` (keyed instances only) and `outcome`. The
 * instruments are those of the registry's kinds (the library's, and those given in its
 * `kinds` option), made when this is called. Without `registry`, reads `defaultRegistry`,
 * which lists the named policies built in code while they are referenced.
 *
 * An observable instrument cannot be a histogram, so call durations become the gauge
 * `breakwater.call.duration` (seconds) with an attribute `quantile` (0.5, 0.9, 0.99, 0.999):
 * percentiles since the instance was made, read from its log-linear histogram (within 1/16 of
 * the true value), for each instance with latency metrics on, and for all the keys of a keyed
 * name together (`breakwater.key` = `_all`).
 *
 * Use one meter per registry: two registries observed through one meter report into the same
 * instruments. Throws {@link OptionsError} for an invalid argument or option.
 *
 * @returns a function that removes the callback: the registry is not read again (an SDK
 *   exporting cumulative sums may go on repeating the last values it received).
 *
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * const stop = observeBreakwaterMetrics(metrics.getMeter('breakwater'), registry);
 * ```
 */
export function observeBreakwaterMetrics(
  meter: Meter,
  registry: Registry = defaultRegistry,
  options?: OpenTelemetryMetricsOptions,
): Disposer {
  if (!hasMethods(meter, ['createObservableCounter', 'addBatchObservableCallback'])) {
    throw new OptionsError('meter', meter, 'an OpenTelemetry Meter');
  }
  checkRegistry(registry);
  // Collecting once checks the options (it throws OptionsError) before anything is made.
  collectMetrics(registry, options);
  // Every instrument of the registry's kinds is made now: an instance of a kind the registry
  // has no instance of yet may be added later, and the callback can only report through
  // instruments it was given.
  const byFamily = new Map<string, Observable>();
  for (const family of metricFamiliesOf(registry.instancesForMetrics().map((k) => k.kind))) {
    const { name, kind, description = family.help } = family.otel;
    const o: MetricOptions = { description, unit: family.unit };
    byFamily.set(
      family.name,
      kind === 'counter'
        ? meter.createObservableCounter(name, o)
        : kind === 'upDownCounter'
          ? meter.createObservableUpDownCounter(name, o)
          : meter.createObservableGauge(name, o),
    );
  }
  const observables = [...byFamily.values()];
  const callback = (result: BatchObservableResult): void => {
    for (const family of collectMetrics(registry, options)) {
      const instrument = byFamily.get(family.name);
      if (instrument === undefined) continue;
      if (family.type === 'histogram') observeQuantiles(result, instrument, family, registry);
      else
        for (const s of family.samples) result.observe(instrument, s.value, attributes(s.labels));
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  let live = true;
  return () => {
    if (!live) return;
    live = false;
    meter.removeBatchObservableCallback(callback, observables);
  };
}

/** OpenTelemetry attributes of a label set; an empty `key` (a named instance) is left out. */
function attributes(labels: MetricLabels): Attributes {
  const a: Attributes = {};
  for (const [label, value] of Object.entries(labels)) {
    if (label === 'key' && value === '') continue;
    a[otelAttributeNames[label] ?? label] = value;
  }
  return a;
}

function observeQuantiles(
  result: BatchObservableResult,
  instrument: Observable,
  family: HistogramFamily,
  registry: Registry,
): void {
  if (family.samples.every((s) => s.count === 0)) return;
  const all = registry.instancesForMetrics();
  for (const s of family.samples) {
    const histogram = s.count === 0 ? undefined : latencyOf(all, s.labels);
    if (histogram === undefined) continue;
    const base = attributes(s.labels);
    for (const [quantile, q] of QUANTILES) {
      result.observe(instrument, histogram.percentile(q) / 1000, { ...base, quantile });
    }
  }
}

/**
 * The latency histogram behind one series of `breakwater_call_duration_seconds`: a named
 * instance's (`key` ""), or the one all the keys of a keyed name share (`key` "_all").
 */
function latencyOf(all: RegistryInstances, labels: MetricLabels): LatencyHistogram | undefined {
  const { kind, name, key } = labels;
  if (name === undefined) return undefined;
  const instances = all.find((k) => k.kind.name === kind);
  if (instances === undefined) return undefined;
  if (key !== '') return instances.keyed.get(name)?.group.latency;
  const named = instances.named.get(name);
  return named === undefined ? undefined : instances.kind.metrics?.latency?.(named.policy);
}
