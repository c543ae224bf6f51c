/**
 * Sub-buckets per power of two. 16 keeps the relative width of a bucket at most 1/16, so a
 * percentile read as a bucket's midpoint is within about 3 % of the true value.
 */
const SUB_BITS = 4;
const SUB = 1 << SUB_BITS;
/** Durations are recorded in whole microseconds, up to 2^32 µs (about 71 minutes). */
const MAX_US = 2 ** 32 - 1;
/** Buckets: 0..15 µs one each, then 16 per power of two from 2^4 to 2^31. */
const BUCKETS = (32 - SUB_BITS + 1) * SUB;

/** The percentiles every latency summary carries. */
export interface LatencySnapshot {
  /** Calls timed. */
  readonly count: number;
  /** Sum of the timed durations in ms. */
  readonly sum: number;
  /** Shortest and longest timed duration in ms (0 when nothing was timed). */
  readonly min: number;
  readonly max: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
}

/** Index of the bucket holding `us` whole microseconds. */
function bucketOf(us: number): number {
  if (us < SUB) return us;
  const exponent = 31 - Math.clz32(us);
  return ((exponent - SUB_BITS + 1) << SUB_BITS) + ((us >>> (exponent - SUB_BITS)) & (SUB - 1));
}

/** Lowest value (µs) of bucket `i`. */
function lowerBound(i: number): number {
  if (i < SUB) return i;
  const exponent = (i >>> SUB_BITS) + SUB_BITS - 1;
  return (SUB + (i & (SUB - 1))) * 2 ** (exponent - SUB_BITS);
}

/**
 * A latency histogram with log-linear buckets (16 per power of two of microseconds, as
 * HdrHistogram lays them out): recording is one index computation and one increment, nothing
 * is allocated, and any percentile can be read at any time, within the width of its bucket
 * (at most 1/16 of the value). Counts are cumulative since the histogram was made.
 *
 * @example
 * ```ts
 * const h = new LatencyHistogram();
 * h.record(12.5);
 * h.percentile(0.99); // ≈ 12.5 (ms)
 * ```
 */
export class LatencyHistogram {
  /** Counts per bucket; read {@link bucketBounds} for their bounds. */
  readonly counts = new Float64Array(BUCKETS);
  count = 0;
  /** Sum of recorded durations in ms. */
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = 0;

  /** Records a duration in ms. Negative and NaN durations are ignored. */
  record(ms: number): void {
    if (!(ms >= 0)) return;
    const us = Math.min(MAX_US, Math.round(ms * 1000));
    this.counts[bucketOf(us)]!++;
    this.count++;
    this.sum += ms;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
  }

  /** Adds every count of `other` to this histogram. */
  add(other: LatencyHistogram): void {
    const a = this.counts;
    const b = other.counts;
    for (let i = 0; i < BUCKETS; i++) a[i]! += b[i]!;
    this.count += other.count;
    this.sum += other.sum;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
  }

  /**
   * The duration in ms below which a fraction `q` (0..1) of the recorded durations fall,
   * read as the midpoint of its bucket (clamped to the recorded min and max); 0 when empty.
   */
  percentile(q: number): number {
    return percentileOf(this.counts, this.count, q, this.min, this.max);
  }

  /** Count, sum, min, max and the usual percentiles as plain data. */
  toJSON(): LatencySnapshot {
    const empty = this.count === 0;
    return {
      count: this.count,
      sum: this.sum,
      min: empty ? 0 : this.min,
      max: this.max,
      p50: this.percentile(0.5),
      p90: this.percentile(0.9),
      p99: this.percentile(0.99),
      p999: this.percentile(0.999),
    };
  }

  /**
   * Durations counted at or below each bound in `bounds` (ms, ascending), for exporters with
   * their own buckets (Prometheus `le`). A fine bucket counts under a bound when its lower
   * edge is at or below it, so a duration exactly at a bound counts under it and each figure
   * may include durations up to 1/16 above the bound.
   */
  cumulativeAt(bounds: readonly number[]): number[] {
    const out: number[] = new Array(bounds.length).fill(0);
    let acc = 0;
    let b = 0;
    for (let i = 0; i < BUCKETS && b < bounds.length; i++) {
      const lowerUs = lowerBound(i);
      while (b < bounds.length && lowerUs > Math.round(bounds[b]! * 1000)) out[b++] = acc;
      acc += this.counts[i]!;
    }
    while (b < bounds.length) out[b++] = acc;
    return out;
  }
}

/** @internal Percentile over raw bucket counts (also used on differences of two readings). */
export function percentileOf(
  counts: Float64Array,
  total: number,
  q: number,
  min = 0,
  max = Number.POSITIVE_INFINITY,
): number {
  if (total <= 0) return 0;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < BUCKETS; i++) {
    seen += counts[i]!;
    if (seen >= rank) {
      const mid = (lowerBound(i) + lowerBound(i + 1)) / 2000;
      return Math.min(max, Math.max(min, mid));
    }
  }
  return max;
}

/** @internal Bucket `i` covers [lower, upper) µs. */
export function bucketBounds(i: number): [number, number] {
  return [lowerBound(i), lowerBound(i + 1)];
}

/** @internal */
export const HISTOGRAM_BUCKETS = BUCKETS;
