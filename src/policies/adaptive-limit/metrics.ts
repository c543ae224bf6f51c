import { counter, declareMetrics, gauge } from '../../telemetry/declareMetrics.js';
import type { AdaptiveLimit } from './AdaptiveLimit.js';

/** Counts of one adaptive limit series (latencies in ms; NaN before any). */
export interface AdaptiveLimitCounts {
  limit: number;
  inFlight: number;
  queueLength: number;
  recentLatency: number;
  baselineLatency: number;
  admitted: number;
  /** limit, queue-timeout, codel, deadline */
  rejected: number[];
  /** answered, dropped, ignored */
  samples: number[];
}

/** A latency in ms as seconds; a latency not measured yet reports 0. */
const seconds = (ms: number): number => (ms > 0 ? ms / 1000 : 0);

type Reading = Exclude<keyof AdaptiveLimitCounts, 'rejected'> | 'rejections';

const declared = declareMetrics<AdaptiveLimit, AdaptiveLimitCounts, Reading>({
  prefix: 'adaptive_limit',
  readings: {
    limit: gauge('{call}', 'Calls an adaptive limit allows in flight now.'),
    inFlight: gauge('{call}', 'Calls in flight through an adaptive limit.'),
    queueLength: gauge('{call}', 'Calls waiting in an adaptive limit’s queue.'),
    recentLatency: gauge(
      's',
      'The dependency’s recent latency as an adaptive limit measured it (the mean of its last window).',
      { value: seconds },
    ),
    baselineLatency: gauge(
      's',
      'An adaptive limit’s estimate of the dependency’s latency without a queue.',
      { value: seconds },
    ),
    admitted: counter('{call}', 'Calls an adaptive limit admitted.'),
    rejections: counter('{call}', 'Calls an adaptive limit refused, by reason.', {
      label: 'reason',
      values: ['limit', 'queue-timeout', 'codel', 'deadline'],
      array: 'rejected',
    }),
    samples: counter(
      '{call}',
      'Calls that ended through an adaptive limit, by how they count: answered, dropped or ignored.',
      { label: 'outcome', values: ['answered', 'dropped', 'ignored'], array: 'samples' },
    ),
  },
  combine: { recentLatency: 'last', baselineLatency: 'last' },
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
  read(c, a) {
    const s = a.stats();
    c.limit += s.limit;
    c.inFlight += s.inFlight;
    c.queueLength += s.queueLength;
    c.recentLatency = s.recentLatency;
    c.baselineLatency = s.baselineLatency;
    c.admitted += s.admitted;
    const r = s.rejectionsByReason;
    c.rejected[0]! += r.limit;
    c.rejected[1]! += r.queueTimeout;
    c.rejected[2]! += r.codel;
    c.rejected[3]! += r.deadline;
    c.samples[0]! += s.samples.answered;
    c.samples[1]! += s.samples.dropped;
    c.samples[2]! += s.samples.ignored;
  },
  enabled: (a) => a.metrics.enabled,
  latency: (a) => a.latency,
});

/** The metric families of adaptive limits. */
export const adaptiveLimitFamilies = declared.families;
/** @internal How adaptive limits report into their families. */
export const adaptiveLimitMetrics = declared.metrics;
