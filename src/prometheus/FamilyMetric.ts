import type { MetricFamily } from '../exporters/families.js';
import type { MetricFamilyDescriptor } from '../telemetry/metricFamily.js';

/** One sample as prom-client's `registerMetric` contract has it. */
export interface PromValue {
  readonly labels: Record<string, string | number>;
  readonly value: number;
  /** Set on histogram samples only: `<name>_bucket`, `<name>_sum`, `<name>_count`. */
  readonly metricName?: string;
}

/** What `get()` resolves to, the shape prom-client's own metrics return. */
export interface PromMetricObject {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly values: PromValue[];
  readonly aggregator: 'sum';
}

/**
 * @internal A prom-client metric whose values are read from a registry's counters when it is
 * scraped. prom-client's own `Histogram` can only observe values one by one, so every family
 * gets this object instead, which meets the contract `Registry.registerMetric` relies on:
 * `name`, `help`, `type`, `aggregator`, `get()` and `reset()`.
 */
export class FamilyMetric {
  /** Read by prom-client, which also rewrites it (drops `_total` of counters for OpenMetrics). */
  name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** How a cluster master (`AggregatorRegistry`) merges the workers' values: summed. */
  readonly aggregator = 'sum' as const;
  private readonly familyName: string;

  constructor(
    descriptor: Pick<MetricFamilyDescriptor, 'name' | 'type' | 'help'>,
    private readonly read: (name: string) => MetricFamily | undefined,
  ) {
    this.name = descriptor.name;
    this.help = descriptor.help;
    this.type = descriptor.type;
    this.familyName = descriptor.name;
  }

  /** The family's series now; none (HELP and TYPE lines only) while it has no instance. */
  async get(): Promise<PromMetricObject> {
    const family = this.read(this.familyName);
    return {
      name: this.name,
      help: family?.help ?? this.help,
      type: this.type,
      values: family === undefined ? [] : promValues(family),
      aggregator: this.aggregator,
    };
  }

  /** The values are the policies' own counters, which a scrape cannot reset: does nothing. */
  reset(): void {}
}

/** The samples of `family` in prom-client's shape (histograms as buckets, sum and count). */
function promValues(family: MetricFamily): PromValue[] {
  if (family.type !== 'histogram') {
    return family.samples.map((s) => ({ labels: { ...s.labels }, value: s.value }));
  }
  const values: PromValue[] = [];
  const bucket = `${family.name}_bucket`;
  for (const s of family.samples) {
    for (let i = 0; i < family.bounds.length; i++) {
      values.push({
        labels: { ...s.labels, le: family.bounds[i]! },
        value: s.buckets[i]!,
        metricName: bucket,
      });
    }
    values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: bucket });
    values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${family.name}_sum` });
    values.push({ labels: { ...s.labels }, value: s.count, metricName: `${family.name}_count` });
  }
  return values;
}
