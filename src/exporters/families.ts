/**
 * Metrics of a registry as plain data, the one model every exporter reads (the Prometheus
 * text of `breakwater/observability`, the prom-client collector, OpenTelemetry observable
 * instruments). Everything is read at collection time from the counters the policies keep;
 * nothing here runs per call.
 */

/** A label set: names to values. Values are untrusted text (keys come from request data). */
export type MetricLabels = Readonly<Record<string, string>>;

/** One counter or gauge series. */
export interface MetricSample {
  readonly labels: MetricLabels;
  readonly value: number;
}

/** One histogram series, with cumulative counts at the family's bucket bounds. */
export interface HistogramSample {
  readonly labels: MetricLabels;
  /** Calls counted at or below each of the family's `bounds` (cumulative, ascending). */
  readonly buckets: readonly number[];
  readonly count: number;
  /** Sum of the observed values, in the family's unit. */
  readonly sum: number;
}

/** A counter or gauge family. */
export interface ScalarFamily {
  /** Prometheus-style name (`breakwater_circuit_breaker_calls_total`). */
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly samples: readonly MetricSample[];
}

/** A histogram family. */
export interface HistogramFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  /** Upper bounds of the buckets, ascending, in the family's unit (seconds). */
  readonly bounds: readonly number[];
  readonly samples: readonly HistogramSample[];
}

/** A metric family of either shape. */
export type MetricFamily = ScalarFamily | HistogramFamily;

/** Options of {@link collectMetrics}. */
export interface CollectOptions {
  /**
   * Keys of one keyed name reported one by one (default 20); the rest are summed into one
   * series with `key="_other"`, so a flood of keys cannot blow up a scrape. Keys out of their
   * kind's rest state come first, then the most recently used.
   */
  readonly maxKeysPerName?: number;
  /**
   * Bucket bounds in seconds for `breakwater_call_duration_seconds` (default: 0.0005, 0.001,
   * 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10).
   */
  readonly durationBuckets?: readonly number[];
}
