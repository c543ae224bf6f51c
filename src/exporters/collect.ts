import { OptionsError } from '../errors/OptionsError.js';
import type { Bulkhead, BulkheadStats } from '../policies/bulkhead/Bulkhead.js';
import { STATE_NAMES } from '../policies/circuit-breaker/state.js';
import type { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import { BreakerCounts, listKeyedBreakers } from '../registry/listing.js';
import type { Registry } from '../registry/Registry.js';
import { shelvedBreakerStats } from '../registry/snapshot.js';
import type { LatencyHistogram } from '../telemetry/LatencyHistogram.js';
import type { MetricFamilyDescriptor } from '../telemetry/metricFamily.js';
import { checkOptionsObject, integer } from '../validation/validate.js';
import type {
  CollectOptions,
  HistogramFamily,
  HistogramSample,
  MetricFamily,
  MetricLabels,
  MetricSample,
} from './families.js';
import {
  ALL_KEYS,
  circuitBreakerFamilies as breaker,
  bulkheadFamilies as bulkhead,
  callDurationFamily,
  rateLimiterFamilies as limiter,
  OTHER_KEYS,
  retryFamilies as retry,
  timeoutFamilies as timeout,
} from './metricFamilies.js';

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

class Families {
  readonly list: (Scalar | HistogramFamily)[] = [];
  private readonly byFamily = new Map<MetricFamilyDescriptor, Scalar>();
  readonly duration: HistogramFamily & { samples: HistogramSample[] };

  constructor(readonly bounds: readonly number[]) {
    const { name, help, type } = callDurationFamily;
    this.duration = { name, help, type, bounds, samples: [] };
  }

  /** One series of `family` (first come, first listed: the families keep the table's order). */
  add(
    family: MetricFamilyDescriptor<'counter' | 'gauge'>,
    labels: MetricLabels,
    value: number,
  ): void {
    let f = this.byFamily.get(family);
    if (f === undefined) {
      f = { name: family.name, help: family.help, type: family.type, samples: [] };
      this.byFamily.set(family, f);
      this.list.push(f);
    }
    f.samples.push({ labels, value });
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
    return out;
  }
}

function breakerSeries(f: Families, name: string, key: string, c: BreakerCounts): void {
  STATE_NAMES.forEach((state, i) => {
    f.add(breaker.state, { name, key, state }, c.inState[i]!);
  });
  f.add(breaker.calls, { name, key, outcome: 'success' }, c.successes);
  f.add(breaker.calls, { name, key, outcome: 'failure' }, c.failures);
  f.add(breaker.calls, { name, key, outcome: 'ignored' }, c.ignored);
  f.add(breaker.rejections, { name, key, reason: 'open' }, c.rejectedOpen);
  f.add(breaker.rejections, { name, key, reason: 'half-open' }, c.rejectedHalfOpen);
  f.add(breaker.rejections, { name, key, reason: 'forced-open' }, c.rejectedForced);
  STATE_NAMES.forEach((to, i) => {
    f.add(breaker.transitions, { name, key, to }, c.transitionsTo[i]!);
  });
}

function bulkheadSeries(
  f: Families,
  name: string,
  key: string,
  s: Pick<BulkheadStats, 'inFlight' | 'queueLength' | 'admitted' | 'rejectionsByReason'>,
  maxConcurrent: number,
): void {
  const labels = { name, key };
  f.add(bulkhead.inFlight, labels, s.inFlight);
  f.add(bulkhead.queueLength, labels, s.queueLength);
  f.add(bulkhead.maxConcurrent, labels, maxConcurrent);
  f.add(bulkhead.admitted, labels, s.admitted);
  f.add(bulkhead.rejections, { name, key, reason: 'full' }, s.rejectionsByReason.full);
  f.add(
    bulkhead.rejections,
    { name, key, reason: 'queue-timeout' },
    s.rejectionsByReason.queueTimeout,
  );
}

function limiterSeries(
  f: Families,
  name: string,
  key: string,
  admitted: number,
  rejected: number,
): void {
  f.add(limiter.permits, { name, key, result: 'admitted' }, admitted);
  f.add(limiter.permits, { name, key, result: 'rejected' }, rejected);
}

/**
 * Every instance of `registry` as metric families (see {@link MetricFamily} for the shapes,
 * and docs/observability.md for the names). Each series has labels `name` and `key` (`""`
 * for named instances). Of each keyed name, at most `maxKeysPerName` keys are reported one by
 * one (those whose breaker is not closed first, then the most recently used); the rest, and
 * the keys already dropped, are summed into one series with `key="_other"` so counters never
 * go down and a flood of keys cannot blow up a scrape. Instances built with `metrics: false`
 * are left out. Read at collection time; nothing runs per call.
 *
 * @example
 * ```ts
 * const text = prometheusText(collectMetrics(registry));
 * ```
 */
export function collectMetrics(registry: Registry, options?: CollectOptions): MetricFamily[] {
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
  const f = new Families(bounds);
  const all = registry.instancesForMetrics();

  for (const [name, { policy }] of all.breakers) {
    if (!policy.metrics.enabled) continue;
    const c = new BreakerCounts();
    c.addBreaker(policy.stats());
    breakerSeries(f, name, '', c);
    if (policy.latency !== undefined) f.histogram('circuitBreaker', name, '', policy.latency);
  }
  for (const [name, group] of all.keyedBreakers) {
    const { kind } = group;
    if (!kind.o.metrics.enabled) continue;
    // Only the keys reported one by one are snapshotted; the others are summed as they are read.
    const others = new BreakerCounts();
    const { shown, hidden } = listKeyedBreakers(group, maxKeys, others);
    for (const { key, breaker, numbers } of shown) {
      const c = new BreakerCounts();
      c.addBreaker(breaker === undefined ? shelvedBreakerStats(numbers!, 0) : breaker.stats());
      breakerSeries(f, name, key, c);
    }
    others.addTotals(kind.retired);
    if (hidden > 0 || !kind.retired.isEmpty()) breakerSeries(f, name, OTHER_KEYS, others);
    if (kind.latency !== undefined) f.histogram('circuitBreaker', name, ALL_KEYS, kind.latency);
  }

  for (const [name, { policy }] of all.bulkheads) {
    if (!policy.metrics.enabled) continue;
    bulkheadSeries(f, name, '', policy.stats(), policy.maxConcurrent);
    if (policy.latency !== undefined) f.histogram('bulkhead', name, '', policy.latency);
  }
  for (const [name, { kind, instances }] of all.keyedBulkheads) {
    if (!kind.o.metrics.enabled) continue;
    instances.sweepAll();
    let shown = 0;
    let hidden = false;
    const other = {
      inFlight: 0,
      queueLength: 0,
      admitted: kind.retired.admitted,
      rejectedFull: kind.retired.rejectedFull,
      rejectedQueueTimeout: kind.retired.rejectedQueueTimeout,
    };
    instances.forEach((key, bulkhead: Bulkhead | undefined) => {
      if (bulkhead === undefined) return;
      if (shown < maxKeys) {
        shown++;
        const s = bulkhead.stats();
        bulkheadSeries(f, name, key, s, s.maxConcurrent);
        return;
      }
      hidden = true;
      bulkhead.addCounts(other);
    });
    if (hidden || other.admitted > 0 || other.rejectedFull > 0 || other.rejectedQueueTimeout > 0) {
      bulkheadSeries(
        f,
        name,
        OTHER_KEYS,
        {
          inFlight: other.inFlight,
          queueLength: other.queueLength,
          admitted: other.admitted,
          rejectionsByReason: {
            full: other.rejectedFull,
            queueTimeout: other.rejectedQueueTimeout,
          },
        },
        kind.o.maxConcurrent,
      );
    }
    if (kind.latency !== undefined) f.histogram('bulkhead', name, ALL_KEYS, kind.latency);
  }

  for (const [name, { policy }] of all.rateLimiters) {
    const s = policy.stats();
    limiterSeries(f, name, '', s.admitted, s.rejected);
  }
  for (const [name, { kind, instances }] of all.keyedRateLimiters) {
    instances.sweepAll();
    let shown = 0;
    let hidden = false;
    const other = { admitted: kind.retired.admitted, rejected: kind.retired.rejected };
    instances.forEach((key, limiter: RateLimiter | undefined) => {
      if (limiter === undefined) return;
      if (shown < maxKeys) {
        shown++;
        const s = limiter.stats();
        limiterSeries(f, name, key, s.admitted, s.rejected);
        return;
      }
      hidden = true;
      limiter.addCounts(other);
    });
    if (hidden || other.admitted > 0 || other.rejected > 0) {
      limiterSeries(f, name, OTHER_KEYS, other.admitted, other.rejected);
    }
  }

  for (const [name, { policy }] of all.retries) {
    const s = policy.stats();
    const labels = { name, key: '' };
    f.add(retry.retries, labels, s.retries);
    f.add(retry.gaveUp, labels, s.gaveUp);
  }
  for (const [name, { policy }] of all.timeouts) {
    f.add(timeout.timeouts, { name, key: '' }, policy.stats().timeouts);
  }
  return f.result();
}
