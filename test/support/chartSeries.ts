import type { ChartPoint } from '../../scripts/chart-adaptive.mjs';
import type { SecondStats } from './queueing.js';

/**
 * A simulator's per-second series as the points of scripts/chart-adaptive.mjs: `t` is the
 * second's start, `inflight` the calls at the dependency (mean over the second), p50 and p99
 * the latency of the calls admitted that ended in it (a second with none leaves a gap), and
 * `limit` what `limit` reads from the second (a constant, or a probe such as
 * `(s) => s.probes.limit`).
 */
export function chartSeries(
  series: readonly SecondStats[],
  limit: (second: SecondStats) => number,
): ChartPoint[] {
  const figure = (v: number) => (Number.isFinite(v) ? v : null);
  return series.map((s) => ({
    t: s.second,
    limit: figure(limit(s)),
    inflight: figure(s.inFlight),
    p50: figure(s.p50),
    p99: figure(s.p99),
  }));
}
