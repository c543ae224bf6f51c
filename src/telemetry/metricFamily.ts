/** The `key` label of the series that sums the keys not reported one by one. */
export const OTHER_KEYS = '_other';
/** The `key` label of a keyed name's duration histogram, shared by all its keys. */
export const ALL_KEYS = '_all';

/** The OpenTelemetry instrument kinds breakwater reports through. */
export type InstrumentKind = 'counter' | 'upDownCounter' | 'gauge';

/** The Prometheus type of a metric family. */
export type FamilyType = 'counter' | 'gauge' | 'histogram';

/**
 * One metric family as every exporter names it: `collectMetrics` builds its series
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

/** The labels of one series, by label name. */
export type SeriesLabels = Readonly<Record<string, string>>;

/** Where a kind writes the series of its instances when metrics are collected. */
export interface SeriesSink {
  /** One series of `family` with `labels` and `value`. */
  add(
    family: MetricFamilyDescriptor<'counter' | 'gauge'>,
    labels: SeriesLabels,
    value: number,
  ): void;
}
