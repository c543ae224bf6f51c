import { OptionsError } from '../errors/OptionsError.js';
import { callbackErrorCounts } from '../events/Listeners.js';
import { otherCopyNote } from '../protocol/brand.js';
import type { AnyPolicyKind, KeyedGroup, KindMetrics } from '../protocol/kind.js';
import type { Keyed } from '../registry/instances.js';
import { listKeyed } from '../registry/listing.js';
import { defaultRegistry, Registry } from '../registry/Registry.js';
import type { LatencyHistogram } from '../telemetry/LatencyHistogram.js';
import {
  ALL_KEYS,
  type MetricFamilyDescriptor,
  OTHER_KEYS,
  type SeriesSink,
} from '../telemetry/metricFamily.js';
import { checkOptionsObject, integer, onlyArguments } from '../validation/validate.js';
import type {
  CollectOptions,
  HistogramFamily,
  HistogramSample,
  MetricFamily,
  MetricLabels,
  MetricSample,
} from './families.js';
import { callbackErrorsFamily, callDurationFamily } from './metricFamilies.js';

const DEFAULT_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Mutable family under construction. */
interface Scalar {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly samples: MetricSample[];
}

class Families implements SeriesSink {
  private readonly list: Scalar[] = [];
  private readonly byFamily = new Map<MetricFamilyDescriptor, Scalar>();
  private readonly duration: HistogramFamily & { samples: HistogramSample[] };

  constructor(
    kinds: readonly AnyPolicyKind[],
    private readonly bounds: readonly number[],
  ) {
    // Listed ahead of their series, so that families come in the order of the kinds and of
    // each kind's `families`, whichever instance writes first.
    for (const kind of kinds) {
      for (const family of kind.metrics?.families ?? []) {
        if (family.type !== 'histogram')
          this.scalar(family as MetricFamilyDescriptor<'counter' | 'gauge'>);
      }
    }
    const { name, help, type } = callDurationFamily;
    this.duration = { name, help, type, bounds, samples: [] };
  }

  private scalar(family: MetricFamilyDescriptor<'counter' | 'gauge'>): Scalar {
    let f = this.byFamily.get(family);
    if (f === undefined) {
      f = { name: family.name, help: family.help, type: family.type, samples: [] };
      this.byFamily.set(family, f);
      this.list.push(f);
    }
    return f;
  }

  add(
    family: MetricFamilyDescriptor<'counter' | 'gauge'>,
    labels: MetricLabels,
    value: number,
  ): void {
    this.scalar(family).samples.push({ labels, value });
  }

  histogram(kind: string, name: string, key: string, h: LatencyHistogram): void {
    const ms = this.bounds.map((b) => b * 1000);
    this.duration.samples.push({
      labels: { kind, name, key },
      buckets: h.cumulativeAt(ms),
      count: h.count,
      sum: h.sum / 1000,
    });
  }

  result(): MetricFamily[] {
    const out: MetricFamily[] = this.list.filter((f) => f.samples.length > 0);
    if (this.duration.samples.length > 0) out.push(this.duration);
    // From the first error on: a registry with nothing to report still renders nothing.
    const samples: MetricSample[] = [];
    for (const [source, value] of Object.entries(callbackErrorCounts())) {
      if (value > 0) samples.push({ labels: { source }, value });
    }
    if (samples.length > 0) {
      const { name, help, type } = callbackErrorsFamily;
      out.push({ name, help, type, samples });
    }
    return out;
  }
}

/**
 * The series of one keyed name: at most `maxKeys` keys one by one (see `listKeyed`), the
 * others and the keys already gone summed into one series keyed `_other`, and the histogram
 * all the keys share. A group that cannot count its shelved keys leaves them out.
 */
function keyedSeries<P, C>(
  f: Families,
  kind: AnyPolicyKind,
  m: KindMetrics<P, C>,
  name: string,
  entry: Keyed<P>,
  maxKeys: number,
): void {
  const group = entry.group as KeyedGroup<P, unknown, C>;
  if (group.metricsEnabled === false) return;
  // Only the keys reported one by one get counts of their own; the others are summed as read.
  const others = m.counts();
  const { shown, hidden } = listKeyed(kind, entry, maxKeys, {
    liveOnly: group.addShelved === undefined,
    hidden(instance, store, at) {
      if (instance !== undefined) m.add(others, instance);
      else group.addShelved!(others, store, at);
    },
  });
  for (const { key, instance, numbers } of shown) {
    const c = m.counts();
    if (instance !== undefined) m.add(c, instance);
    else group.addShelved!(c, numbers!, 0);
    m.series(f, name, key, c);
  }
  const { retired } = group;
  if (retired !== undefined) m.addCounts(others, retired);
  if (hidden > 0 || (retired !== undefined && !m.isEmpty(retired))) {
    m.series(f, name, OTHER_KEYS, others);
  }
  if (group.latency !== undefined) f.histogram(kind.name, name, ALL_KEYS, group.latency);
}

/**
 * @internal Throws {@link OptionsError} unless `registry` is a Registry of this copy of
 * breakwater, as the exporters that read one check before making anything.
 */
export function checkRegistry(registry: unknown): void {
  if (!(registry instanceof Registry)) {
    throw new OptionsError('registry', registry, `a breakwater Registry${otherCopyNote(registry)}`);
  }
}

/**
 * Every instance of `registry` as metric families (see {@link MetricFamily} for the shapes,
 * and docs/observability.md for the names), kind by kind in the order of the registry's
 * kinds (the library's, then those given in its `kinds` option), each kind's families in the
 * order its descriptor lists them, then the call duration histogram. Each series has labels
 * `name` and `key` (`""` for named instances). Of each keyed name, at most `maxKeysPerName`
 * keys are reported one by one (those out of their kind's rest state first, such as a breaker
 * that is not closed, then the most recently used); the rest, and the keys already dropped,
 * are summed into one series with `key="_other"` so counters never go down and a flood of
 * keys cannot blow up a scrape. Instances built with `metrics: false` are left out. Read at
 * collection time; nothing runs per call. Without a registry, reads `defaultRegistry`, which
 * lists the named policies built in code while they are referenced.
 *
 * @example
 * ```ts
 * const text = prometheusText(collectMetrics(registry));
 * ```
 */
export function collectMetrics(
  registry: Registry = defaultRegistry,
  options?: CollectOptions,
): MetricFamily[] {
  onlyArguments(arguments, 2, 'collectMetrics()');
  const o = checkOptionsObject(options, ['maxKeysPerName', 'durationBuckets'], '');
  const maxKeys = integer(o.maxKeysPerName, 'maxKeysPerName', 20, 0, 100_000);
  const bounds = (o.durationBuckets as readonly number[] | undefined) ?? DEFAULT_BUCKETS;
  if (
    !Array.isArray(bounds) ||
    bounds.length === 0 ||
    !bounds.every(
      (b, i) =>
        typeof b === 'number' && b > 0 && Number.isFinite(b) && (i === 0 || b > bounds[i - 1]!),
    )
  ) {
    throw new OptionsError(
      'durationBuckets',
      bounds,
      'a non-empty ascending array of positive finite seconds',
    );
  }
  const all = registry.instancesForMetrics();
  const f = new Families(
    all.map((k) => k.kind),
    bounds,
  );
  for (const { kind, named, keyed } of all) {
    const m = kind.metrics;
    if (m === undefined) continue;
    for (const [name, { policy }] of named) {
      if (m.enabled?.(policy) === false) continue;
      const c = m.counts();
      m.add(c, policy);
      m.series(f, name, '', c);
      const latency = m.latency?.(policy);
      if (latency !== undefined) f.histogram(kind.name, name, '', latency);
    }
    for (const [name, entry] of keyed) keyedSeries(f, kind, m, name, entry, maxKeys);
  }
  return f.result();
}
