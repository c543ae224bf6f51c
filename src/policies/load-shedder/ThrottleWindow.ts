import { CRITICALITY_LEVELS } from '../../protocol/criticality.js';

/** Buckets a window is kept in. */
export const BUCKETS = 60;
/** The last buckets that are also judged alone (the recent window): a twelfth of the window. */
export const RECENT_BUCKETS = 5;
const LEVELS = CRITICALITY_LEVELS.length;

/**
 * @internal Requests (by criticality level) and accepts over a sliding window of
 * {@link BUCKETS} buckets, with running totals over the whole window. A call adds to its bucket
 * and to the totals, two additions each way; the sums a refusal needs (per level, and over the
 * last {@link RECENT_BUCKETS} buckets) are kept for the buckets before the current one, moved
 * when time moves to a new bucket, and completed with the current bucket only when read. Fixed
 * memory, no allocation, and no walk over the buckets but when time moves to a new one.
 */
export class ThrottleWindow {
  /** Requests per bucket and level: `bucket * LEVELS + level`. */
  private readonly requests = new Float64Array(BUCKETS * LEVELS);
  private readonly accepts = new Float64Array(BUCKETS);
  /** Requests of each level in the window's buckets before the current one. */
  private readonly pastLevels = new Float64Array(LEVELS);
  /** Requests and accepts in the recent buckets before the current one. */
  private pastRecentRequests = 0;
  private pastRecentAccepts = 0;
  /** Requests of every level in the window. */
  totalRequests = 0;
  totalAccepts = 0;
  /** The bucket calls add to, and the number of bucket-lengths since time 0 it stands for. */
  private current = 0;
  private epoch = 0;
  /** When time reaches this, calls belong to a later bucket. */
  nextBucketAt = 0;

  constructor(readonly bucketMs: number) {}

  /** Moves the window to `now`: the buckets it leaves are emptied and their counts taken off. */
  advance(now: number): void {
    const epoch = Math.floor(now / this.bucketMs);
    this.nextBucketAt = (epoch + 1) * this.bucketMs;
    if (epoch <= this.epoch) return;
    const steps = Math.min(epoch - this.epoch, BUCKETS);
    const requests = this.requests;
    const past = this.pastLevels;
    // The current bucket becomes a past one; a move by the whole window also empties it below.
    for (let l = 0; l < LEVELS; l++) past[l]! += requests[this.current * LEVELS + l]!;
    for (let s = 1; s <= steps; s++) {
      const b = (this.current + s) % BUCKETS;
      this.totalAccepts -= this.accepts[b]!;
      this.accepts[b] = 0;
      for (let l = 0; l < LEVELS; l++) {
        const n = requests[b * LEVELS + l]!;
        past[l]! -= n;
        this.totalRequests -= n;
        requests[b * LEVELS + l] = 0;
      }
    }
    this.current = (this.current + steps) % BUCKETS;
    this.epoch = epoch;
    this.sumPastRecent();
  }

  /** A call of `level` was asked for (admitted or refused). */
  request(level: number): void {
    this.requests[this.current * LEVELS + level]!++;
    this.totalRequests++;
  }

  /** A request of `level` turned out to say nothing of the dependency: it no longer counts. */
  forget(level: number): void {
    this.requests[this.current * LEVELS + level]!--;
    this.totalRequests--;
  }

  /** The dependency accepted a call. */
  accept(): void {
    this.accepts[this.current]!++;
    this.totalAccepts++;
  }

  /** Requests of `level` in the window. */
  levelRequests(level: number): number {
    return this.pastLevels[level]! + this.requests[this.current * LEVELS + level]!;
  }

  /** Requests in the last {@link RECENT_BUCKETS} buckets. */
  recentRequests(): number {
    const at = this.current * LEVELS;
    let n = this.pastRecentRequests;
    for (let l = 0; l < LEVELS; l++) n += this.requests[at + l]!;
    return n;
  }

  /** Accepts in the last {@link RECENT_BUCKETS} buckets. */
  recentAccepts(): number {
    return this.pastRecentAccepts + this.accepts[this.current]!;
  }

  /** Empties the window. */
  clear(): void {
    this.requests.fill(0);
    this.accepts.fill(0);
    this.pastLevels.fill(0);
    this.totalRequests = 0;
    this.totalAccepts = 0;
    this.pastRecentRequests = 0;
    this.pastRecentAccepts = 0;
  }

  private sumPastRecent(): void {
    let requests = 0;
    let accepts = 0;
    for (let s = 1; s < RECENT_BUCKETS; s++) {
      const b = (this.current - s + BUCKETS) % BUCKETS;
      accepts += this.accepts[b]!;
      for (let l = 0; l < LEVELS; l++) requests += this.requests[b * LEVELS + l]!;
    }
    this.pastRecentRequests = requests;
    this.pastRecentAccepts = accepts;
  }
}
