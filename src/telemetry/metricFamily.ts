import type { PolicyKind } from '../errors/PolicyRejectedError.js';

/** The OpenTelemetry instrument kinds breakwater reports through. */
export type InstrumentKind = 'counter' | 'upDownCounter' | 'gauge';

/** The Prometheus type of a metric family. */
export type FamilyType = 'counter' | 'gauge' | 'histogram';

/**
 * @internal One metric family as every exporter names it: `collectMetrics` builds its series
 * under `name`, `help` and `type`; prom-client registers it ahead of the first scrape;
 * OpenTelemetry reports it through the instrument `otel`; docs/observability.md lists it.
 * A leaf type, so that a policy's folder can declare the families of its kind.
 */
export interface MetricFamilyDescriptor<T extends FamilyType = FamilyType> {
  /** Prometheus-style name: `breakwater_<kind>_<quantity>`, `_total` on counters. */
  readonly name: string;
  readonly type: T;
  /** The HELP text, and the OpenTelemetry description unless `otel.description` is set. */
  readonly help: string;
  /** The label names of every series, in the order the series write them. */
  readonly labels: readonly string[];
  /** UCUM unit, as the OpenTelemetry semantic conventions write it (`{call}`, `s`, `1`). */
  readonly unit: string;
  readonly otel: {
    /** The instrument's name: the `breakwater.` namespace, dots, no unit, no `_total`. */
    readonly name: string;
    readonly kind: InstrumentKind;
    /** When the instrument reports something else than the HELP text says. */
    readonly description?: string;
  };
}

/** @internal The metric families of one policy kind. */
export interface KindMetricFamilies {
  readonly kind: PolicyKind;
  readonly families: readonly MetricFamilyDescriptor[];
}
