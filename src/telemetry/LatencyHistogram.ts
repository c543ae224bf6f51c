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
/** How far back the recent percentiles look, in ms. */
export const RECENT_WINDOW = 60_000;
/**
 * The counts are noted at most this often (ms) when read, so the recent percentiles of a
 * histogram read often cover between 60 and 75 s.
 */
const MARK_EVERY = 15_000;
/** Notes kept: enough that one is always at least {@link RECENT_WINDOW} old. */
const MARKS = RECENT_WINDOW / MARK_EVERY + 1;

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
  /**
   * The same figures over the calls of about the last minute, so that they move during an
   * outage; present in the stats of policies (read with their clock's time), absent from
   * `toJSON()`.
   */
  readonly recent?: RecentLatencySnapshot;
}

/**
 * Latency of the recent calls: those recorded since the histogram noted its counts at a
 * reading at least 60 s ago, or since its oldest noted reading when
 * none is that old.
 */
export interface RecentLatencySnapshot {
  /**
   * ms the figures cover: 60 to 75 s when the histogram is read at least every 15 s, more
   * when readings are further apart, less in the first minute of readings. Absent at the
   * first reading, whose figures cover every call since the histogram was made.
   */
  readonly window?: number;
  /** Calls timed in the window. */
  readonly count: number;
  /** Sum of their durations in ms. */
  readonly sum: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
}

/** The counts of a histogram as noted at a reading. */
interface Mark {
  at: number;
  readonly counts: Float64Array;
  count: number;
  sum: number;
}

/** Recent counts (a histogram minus a mark), computed in place: readings are synchronous. */
const scratch = new Float64Array(BUCKETS);

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
 * is allocated, and any percentile can be read at any time, within the width of its bucket:
 * at most 1/16 of the value from 16 µs to about 71 minutes (2^32 µs). Durations are kept in
 * whole microseconds (below 16 µs, within half a microsecond) and longer ones are counted as
 * 71 minutes. Counts are cumulative since the histogram was made.
 *
 * {@link snapshot} also reads the percentiles of the last minute or so. Recording does not
 * read the time: the histogram notes a copy of its counts when it is read (at most every
 * 15 s) and subtracts the copy from a minute ago, so the recent figures cost nothing per call.
 *
 * @example
 * ```ts
 * const h = new LatencyHistogram();
 * h.record(12.5);
 * h.percentile(0.99); // ≈ 12.5 (ms)
 * ```
 */
export class LatencyHistogram {
  /** Counts per bucket; read `bucketBounds` for their bounds. */
  readonly counts = new Float64Array(BUCKETS);
  count = 0;
  /** Sum of recorded durations in ms. */
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = 0;
  /** Counts noted at readings by {@link snapshot}, oldest first; made at the first one. */
  private marks: Mark[] | undefined = undefined;

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
   * {@link toJSON} with the figures of the recent calls (`recent`) at time `now` (ms, on the
   * clock of the policy that records): the calls since the counts noted at a reading about a
   * minute ago. Each reading may note the counts (at most every 15 s), so read it with one
   * clock whose time does not go back.
   */
  snapshot(now: number): LatencySnapshot {
    return { ...this.toJSON(), recent: this.recent(now) };
  }

  private recent(now: number): RecentLatencySnapshot {
    const marks = (this.marks ??= []);
    const newest = marks[marks.length - 1];
    if (newest === undefined || now - newest.at >= MARK_EVERY) {
      const mark =
        marks.length === MARKS
          ? marks.shift()!
          : { at: 0, counts: new Float64Array(BUCKETS), count: 0, sum: 0 };
      mark.at = now;
      mark.counts.set(this.counts);
      mark.count = this.count;
      mark.sum = this.sum;
      marks.push(mark);
    }
    // The newest mark at least a window old; else the oldest one, unless it was noted just now.
    let base: Mark | undefined = marks[0]!.at < now ? marks[0] : undefined;
    for (const mark of marks) if (mark.at <= now - RECENT_WINDOW) base = mark;
    if (base === undefined) {
      return { count: this.count, sum: this.sum, ...percentiles(this.counts, this.count, this) };
    }
    const total = this.count - base.count;
    for (let i = 0; i < BUCKETS; i++) scratch[i] = this.counts[i]! - base.counts[i]!;
    return {
      window: now - base.at,
      count: total,
      sum: total === 0 ? 0 : this.sum - base.sum,
      ...percentiles(scratch, total, this),
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

function percentiles(
  counts: Float64Array,
  total: number,
  h: LatencyHistogram,
): Pick<LatencySnapshot, 'p50' | 'p90' | 'p99' | 'p999'> {
  return {
    p50: percentileOf(counts, total, 0.5, h.min, h.max),
    p90: percentileOf(counts, total, 0.9, h.min, h.max),
    p99: percentileOf(counts, total, 0.99, h.min, h.max),
    p999: percentileOf(counts, total, 0.999, h.min, h.max),
  };
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
