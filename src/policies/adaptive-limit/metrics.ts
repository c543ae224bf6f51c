import type { KindMetrics } from '../../protocol/kind.js';
import type { MetricFamilyDescriptor } from '../../telemetry/metricFamily.js';
import type { AdaptiveLimit } from './AdaptiveLimit.js';

/** The metric families of adaptive limits. */
export const adaptiveLimitFamilies = {
  limit: {
    name: 'breakwater_adaptive_limit_limit',
    type: 'gauge',
    help: 'Calls an adaptive limit allows in flight now.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.adaptive_limit.limit', kind: 'upDownCounter' },
  },
  inFlight: {
    name: 'breakwater_adaptive_limit_in_flight',
    type: 'gauge',
    help: 'Calls in flight through an adaptive limit.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.adaptive_limit.in_flight', kind: 'upDownCounter' },
  },
  queueLength: {
    name: 'breakwater_adaptive_limit_queue_length',
    type: 'gauge',
    help: 'Calls waiting in an adaptive limit’s queue.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.adaptive_limit.queue_length', kind: 'upDownCounter' },
  },
  recentLatency: {
    name: 'breakwater_adaptive_limit_recent_latency_seconds',
    type: 'gauge',
    help: 'The dependency’s recent latency as an adaptive limit measured it (the mean of its last window).',
    labels: ['name', 'key'],
    unit: 's',
    otel: { name: 'breakwater.adaptive_limit.recent_latency', kind: 'upDownCounter' },
  },
  baselineLatency: {
    name: 'breakwater_adaptive_limit_baseline_latency_seconds',
    type: 'gauge',
    help: 'An adaptive limit’s estimate of the dependency’s latency without a queue.',
    labels: ['name', 'key'],
    unit: 's',
    otel: { name: 'breakwater.adaptive_limit.baseline_latency', kind: 'upDownCounter' },
  },
  admitted: {
    name: 'breakwater_adaptive_limit_admitted_total',
    type: 'counter',
    help: 'Calls an adaptive limit admitted.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.adaptive_limit.admitted', kind: 'counter' },
  },
  rejections: {
    name: 'breakwater_adaptive_limit_rejections_total',
    type: 'counter',
    help: 'Calls an adaptive limit refused, by reason.',
    labels: ['name', 'key', 'reason'],
    unit: '{call}',
    otel: { name: 'breakwater.adaptive_limit.rejections', kind: 'counter' },
  },
  samples: {
    name: 'breakwater_adaptive_limit_samples_total',
    type: 'counter',
    help: 'Calls that ended through an adaptive limit, by how they count: answered, dropped or ignored.',
    labels: ['name', 'key', 'outcome'],
    unit: '{call}',
    otel: { name: 'breakwater.adaptive_limit.samples', kind: 'counter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

/** Counts of one adaptive limit series (latencies in ms; NaN before any). */
export interface AdaptiveLimitCounts {
  limit: number;
  inFlight: number;
  queueLength: number;
  recentLatency: number;
  baselineLatency: number;
  admitted: number;
  /** limit, queue-timeout, codel, deadline */
  rejected: [number, number, number, number];
  /** answered, dropped, ignored */
  samples: [number, number, number];
}

const f = adaptiveLimitFamilies;
const REASONS = ['limit', 'queue-timeout', 'codel', 'deadline'] as const;
const OUTCOMES = ['answered', 'dropped', 'ignored'] as const;

/** A latency in ms as seconds; a latency not measured yet reports 0. */
const seconds = (ms: number): number => (ms > 0 ? ms / 1000 : 0);

/** @internal How adaptive limits report into their families. */
export const adaptiveLimitMetrics: KindMetrics<AdaptiveLimit, AdaptiveLimitCounts> = {
  families: Object.values(f),
  enabled: (a) => a.metrics.enabled,
  latency: (a) => a.latency,
  counts: () => ({
    limit: 0,
    inFlight: 0,
    queueLength: 0,
    recentLatency: Number.NaN,
    baselineLatency: Number.NaN,
    admitted: 0,
    rejected: [0, 0, 0, 0],
    samples: [0, 0, 0],
  }),
  add(c, a) {
    const s = a.stats();
    c.limit += s.limit;
    c.inFlight += s.inFlight;
    c.queueLength += s.queueLength;
    c.recentLatency = s.recentLatency;
    c.baselineLatency = s.baselineLatency;
    c.admitted += s.admitted;
    const r = s.rejectionsByReason;
    c.rejected[0] += r.limit;
    c.rejected[1] += r.queueTimeout;
    c.rejected[2] += r.codel;
    c.rejected[3] += r.deadline;
    c.samples[0] += s.samples.answered;
    c.samples[1] += s.samples.dropped;
    c.samples[2] += s.samples.ignored;
  },
  addCounts(c, other) {
    c.limit += other.limit;
    c.inFlight += other.inFlight;
    c.queueLength += other.queueLength;
    c.recentLatency = other.recentLatency;
    c.baselineLatency = other.baselineLatency;
    c.admitted += other.admitted;
    for (let i = 0; i < 4; i++) c.rejected[i]! += other.rejected[i]!;
    for (let i = 0; i < 3; i++) c.samples[i]! += other.samples[i]!;
  },
  isEmpty: (c) => c.admitted + c.rejected.reduce((a, b) => a + b, 0) === 0,
  series(sink, name, key, c) {
    const labels = { name, key };
    sink.add(f.limit, labels, c.limit);
    sink.add(f.inFlight, labels, c.inFlight);
    sink.add(f.queueLength, labels, c.queueLength);
    sink.add(f.recentLatency, labels, seconds(c.recentLatency));
    sink.add(f.baselineLatency, labels, seconds(c.baselineLatency));
    sink.add(f.admitted, labels, c.admitted);
    REASONS.forEach((reason, i) => {
      sink.add(f.rejections, { name, key, reason }, c.rejected[i]!);
    });
    OUTCOMES.forEach((outcome, i) => {
      sink.add(f.samples, { name, key, outcome }, c.samples[i]!);
    });
  },
};
