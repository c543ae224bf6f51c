import type { Meter } from '@opentelemetry/api';
import {
  type DataPoint,
  DataPointType,
  MeterProvider,
  type MetricData,
  MetricReader,
} from '@opentelemetry/sdk-metrics';

/** A metric reader that collects only when asked, as a pull exporter does. */
class PullReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** One collection: metrics by instrument name. */
export type Collected = Map<string, MetricData>;

export interface Metrics {
  readonly meter: Meter;
  collect(): Promise<Collected>;
  close(): Promise<void>;
}

/** A real SDK meter whose data is read through a MetricReader's `collect()`. */
export function startMetrics(): Metrics {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  return {
    meter: provider.getMeter('breakwater-test'),
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw errors[0];
      const out: Collected = new Map();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const m of scope.metrics) out.set(m.descriptor.name, m);
      }
      return out;
    },
    close: () => provider.shutdown(),
  };
}

/** The value of the one data point of `name` whose attributes are exactly `attributes`. */
export function pointValue(
  collected: Collected,
  name: string,
  attributes: Record<string, string>,
): number {
  const m = collected.get(name);
  if (m === undefined) throw new Error(`No metric ${name}`);
  if (m.dataPointType === DataPointType.HISTOGRAM) throw new Error(`${name} is a histogram`);
  const points = (m.dataPoints as DataPoint<number>[]).filter((p) =>
    sameAttributes(p.attributes as Record<string, unknown>, attributes),
  );
  if (points.length !== 1) {
    throw new Error(
      `Expected one ${name}${JSON.stringify(attributes)}, found ${points.length} among ${JSON.stringify(m.dataPoints.map((p) => p.attributes))}`,
    );
  }
  return points[0]!.value;
}

/**
 * Data points of the breakwater instruments of a registry's instances in `collected`: the
 * process-wide count of callback errors, which earlier tests of a file may have raised, is
 * left out.
 */
export function pointCount(collected: Collected): number {
  let n = 0;
  for (const [name, m] of collected) {
    if (name.startsWith('breakwater.') && name !== 'breakwater.callback.errors') {
      n += m.dataPoints.length;
    }
  }
  return n;
}

function sameAttributes(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}
