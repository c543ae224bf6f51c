import { metricFamiliesOf } from '../exporters/metricFamilies.js';
import { POLICY_KINDS } from '../policies/kinds.js';
import type { InstrumentKind } from '../telemetry/metricFamily.js';

export type { InstrumentKind } from '../telemetry/metricFamily.js';

/** How one metric family of `collectMetrics` is reported to OpenTelemetry. */
export interface InstrumentName {
  /** The instrument's name, in the OpenTelemetry style (dots, no unit, no `_total`). */
  readonly name: string;
  readonly kind: InstrumentKind;
  /** UCUM unit, as OpenTelemetry semantic conventions write it. */
  readonly unit: string;
}

/**
 * The OpenTelemetry name of each Prometheus-style family `collectMetrics` reports for the
 * library's kinds (a kind given to a registry's `kinds` option names its own, in its
 * descriptor's `metrics.families`). Counters become observable counters; current amounts that
 * add up across instances (states, calls in flight, limits) observable up-down counters, as
 * the semantic conventions ask for such values; the duration histogram a gauge of percentiles.
 */
export const otelInstruments: Readonly<Record<string, InstrumentName>> = Object.fromEntries(
  metricFamiliesOf(POLICY_KINDS).map((f) => [
    f.name,
    { name: f.otel.name, kind: f.otel.kind, unit: f.unit },
  ]),
);

/** Attribute names of the label names `collectMetrics` uses; other labels keep their name. */
export const otelAttributeNames: Readonly<Record<string, string>> = {
  name: 'breakwater.policy.name',
  key: 'breakwater.key',
  kind: 'breakwater.policy.kind',
};
