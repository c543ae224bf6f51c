import {
  bucketBounds,
  HISTOGRAM_BUCKETS,
  LatencyHistogram,
} from '../../telemetry/LatencyHistogram.js';

/** Durations recorded between two readings of the percentile. */
const REFRESH_EVERY = 16;

/**
 * @internal A live percentile of recent durations in fixed memory: two log-linear histograms
 * (16 buckets per power of two, so a percentile read at a bucket's midpoint is within about
 * 3 % of the exact one), the current half-window and the one before it. At each half-window
 * the older is dropped, so the percentile covers the last half-window to window. The
 * percentile is read again every 16 durations and at each turn, not per call.
 */
export class LatencyWindow {
  private current = new LatencyHistogram();
  private previous = new LatencyHistogram();
  /** When the current half-window began (NaN before the first reading). */
  private since = Number.NaN;
  private fresh = 0;
  /** The percentile in ms, or NaN while the window holds fewer than `minSamples` durations. */
  private value = Number.NaN;

  constructor(
    private readonly q: number,
    private readonly minSamples: number,
    private readonly half: number,
  ) {}

  /** Records a duration in ms that ended at `now`. */
  record(ms: number, now: number): void {
    this.turn(now);
    this.current.record(ms);
    const total = this.current.count + this.previous.count;
    if (++this.fresh >= REFRESH_EVERY || total === this.minSamples) this.refresh();
  }

  /** The percentile at `now` in ms, or NaN while too few durations were recorded. */
  read(now: number): number {
    this.turn(now);
    return this.value;
  }

  /** Durations the percentile is read from now. */
  get samples(): number {
    return this.current.count + this.previous.count;
  }

  private turn(now: number): void {
    if (Number.isNaN(this.since)) this.since = now;
    const age = now - this.since;
    if (age < this.half) return;
    // The current half becomes the previous one (dropped too when it is a window old).
    const old = this.previous;
    if (age >= 2 * this.half) clear(this.current);
    this.previous = this.current;
    clear(old);
    this.current = old;
    this.since += this.half * Math.floor(age / this.half);
    this.refresh();
  }

  private refresh(): void {
    this.fresh = 0;
    const a = this.current;
    const b = this.previous;
    const total = a.count + b.count;
    if (total < this.minSamples || total === 0) {
      this.value = Number.NaN;
      return;
    }
    const rank = Math.max(1, Math.ceil(this.q * total));
    let seen = 0;
    for (let i = 0; i < HISTOGRAM_BUCKETS; i++) {
      seen += a.counts[i]! + b.counts[i]!;
      if (seen >= rank) {
        const [low, high] = bucketBounds(i);
        const min = Math.min(a.min, b.min);
        const max = Math.max(a.max, b.max);
        this.value = Math.min(max, Math.max(min, (low + high) / 2000));
        return;
      }
    }
    this.value = Math.max(a.max, b.max);
  }
}

function clear(h: LatencyHistogram): void {
  h.counts.fill(0);
  h.count = 0;
  h.sum = 0;
  h.min = Number.POSITIVE_INFINITY;
  h.max = 0;
}
