import { OptionsError } from '../errors/OptionsError.js';
import type { Bulkhead, BulkheadStats } from '../policies/bulkhead/Bulkhead.js';
import { STATE_NAMES } from '../policies/circuit-breaker/state.js';
import type { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import { BreakerCounts, listKeyedBreakers } from '../registry/listing.js';
import type { Registry } from '../registry/Registry.js';
import { shelvedBreakerStats } from '../registry/snapshot.js';
import type { LatencyHistogram } from '../telemetry/LatencyHistogram.js';
import { checkOptionsObject, integer } from '../validation/validate.js';
import type {
  CollectOptions,
  HistogramFamily,
  HistogramSample,
  MetricFamily,
  MetricLabels,
  MetricSample,
} from './families.js';

/** The `key` label of the series that sums the keys not reported one by one. */
export const OTHER_KEYS = '_other';
/** The `key` label of a keyed name's duration histogram, shared by all its keys. */
export const ALL_KEYS = '_all';

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
  private readonly byName = new Map<string, Scalar>();
  readonly duration: HistogramFamily & { samples: HistogramSample[] };

  constructor(readonly bounds: readonly number[]) {
    this.duration = {
      name: 'breakwater_call_duration_seconds',
      help: 'Duration of the calls a policy admitted (sampled; see the metrics option).',
      type: 'histogram',
      bounds,
      samples: [],
    };
  }

  add(
    name: string,
    type: 'counter' | 'gauge',
    help: string,
    labels: MetricLabels,
    value: number,
  ): void {
    let f = this.byName.get(name);
    if (f === undefined) {
      f = { name, help, type, samples: [] };
      this.byName.set(name, f);
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
    f.add(
      'breakwater_circuit_breaker_state',
      'gauge',
      `Circuit breaker state: 1 for the current state (for key="${OTHER_KEYS}": the number of keys in it).`,
      { name, key, state },
      c.inState[i]!,
    );
  });
  const calls = 'breakwater_circuit_breaker_calls_total';
  const callsHelp = 'Calls a circuit breaker admitted, by outcome.';
  f.add(calls, 'counter', callsHelp, { name, key, outcome: 'success' }, c.successes);
  f.add(calls, 'counter', callsHelp, { name, key, outcome: 'failure' }, c.failures);
  f.add(calls, 'counter', callsHelp, { name, key, outcome: 'ignored' }, c.ignored);
  const rej = 'breakwater_circuit_breaker_rejections_total';
  const rejHelp = 'Calls a circuit breaker refused, by the state that refused them.';
  f.add(rej, 'counter', rejHelp, { name, key, reason: 'open' }, c.rejectedOpen);
  f.add(rej, 'counter', rejHelp, { name, key, reason: 'half-open' }, c.rejectedHalfOpen);
  f.add(rej, 'counter', rejHelp, { name, key, reason: 'forced-open' }, c.rejectedForced);
  STATE_NAMES.forEach((to, i) => {
    f.add(
      'breakwater_circuit_breaker_transitions_total',
      'counter',
      'Circuit breaker state changes, by the state entered.',
      { name, key, to },
      c.transitionsTo[i]!,
    );
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
  f.add('breakwater_bulkhead_in_flight', 'gauge', 'Calls in flight.', labels, s.inFlight);
  f.add(
    'breakwater_bulkhead_queue_length',
    'gauge',
    'Calls waiting in the queue.',
    labels,
    s.queueLength,
  );
  f.add(
    'breakwater_bulkhead_max_concurrent',
    'gauge',
    'Calls allowed in flight at once.',
    labels,
    maxConcurrent,
  );
  f.add(
    'breakwater_bulkhead_admitted_total',
    'counter',
    'Calls a bulkhead admitted.',
    labels,
    s.admitted,
  );
  const rej = 'breakwater_bulkhead_rejections_total';
  const rejHelp = 'Calls a bulkhead refused, by reason.';
  f.add(rej, 'counter', rejHelp, { name, key, reason: 'full' }, s.rejectionsByReason.full);
  f.add(
    rej,
    'counter',
    rejHelp,
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
  const n = 'breakwater_rate_limiter_permits_total';
  const help = 'Permit requests of a rate limiter, by result.';
  f.add(n, 'counter', help, { name, key, result: 'admitted' }, admitted);
  f.add(n, 'counter', help, { name, key, result: 'rejected' }, rejected);
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
    f.add(
      'breakwater_retry_retries_total',
      'counter',
      'Retries a retry policy decided.',
      labels,
      s.retries,
    );
    f.add(
      'breakwater_retry_gave_up_total',
      'counter',
      'Calls a retry policy gave up on: attempts or time used up, or a failure it does not retry after a retry.',
      labels,
      s.gaveUp,
    );
  }
  for (const [name, { policy }] of all.timeouts) {
    f.add(
      'breakwater_timeout_timeouts_total',
      'counter',
      'Calls whose deadline passed.',
      { name, key: '' },
      policy.stats().timeouts,
    );
  }
  return f.result();
}
