import { CRITICALITY_LEVELS } from '../../protocol/criticality.js';

/** Buckets a window is kept in. */
export const BUCKETS = 60;
/** The last buckets that are also judged alone (the recent window): a twelfth of the window. */
export const RECENT_BUCKETS = 5;
const LEVELS = CRITICALITY_LEVELS.length;

/**
 * @internal Requests (by criticality level) and accepts over a sliding window of
 * {@link BUCKETS} buckets, with running sums over the whole window and over its last
 * {@link RECENT_BUCKETS} buckets, so that a call reads the sums and adds to one bucket: fixed
 * memory, no allocation, and no walk over the buckets but when time moves to a new one.
 */
export class ThrottleWindow {
  /** Requests per bucket and level: `bucket * LEVELS + level`. */
  private readonly requests = new Float64Array(BUCKETS * LEVELS);
  private readonly accepts = new Float64Array(BUCKETS);
  /** Requests of each level in the window. */
  readonly levelRequests = new Float64Array(LEVELS);
  /** Requests of every level in the window. */
  totalRequests = 0;
  totalAccepts = 0;
  recentRequests = 0;
  recentAccepts = 0;
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
    for (let s = 1; s <= steps; s++) {
      const b = (this.current + s) % BUCKETS;
      this.totalAccepts -= this.accepts[b]!;
      this.accepts[b] = 0;
      for (let l = 0; l < LEVELS; l++) {
        const n = this.requests[b * LEVELS + l]!;
        this.levelRequests[l]! -= n;
        this.totalRequests -= n;
        this.requests[b * LEVELS + l] = 0;
      }
    }
    this.current = (this.current + steps) % BUCKETS;
    this.epoch = epoch;
    this.sumRecent();
  }

  /** A call of `level` was asked for (admitted or refused). */
  request(level: number): void {
    this.requests[this.current * LEVELS + level]!++;
    this.levelRequests[level]!++;
    this.totalRequests++;
    this.recentRequests++;
  }

  /** A request of `level` turned out to say nothing of the dependency: it no longer counts. */
  forget(level: number): void {
    this.requests[this.current * LEVELS + level]!--;
    this.levelRequests[level]!--;
    this.totalRequests--;
    this.recentRequests--;
  }

  /** The dependency accepted a call. */
  accept(): void {
    this.accepts[this.current]!++;
    this.totalAccepts++;
    this.recentAccepts++;
  }

  /** Empties the window. */
  clear(): void {
    this.requests.fill(0);
    this.accepts.fill(0);
    this.levelRequests.fill(0);
    this.totalRequests = 0;
    this.totalAccepts = 0;
    this.recentRequests = 0;
    this.recentAccepts = 0;
  }

  private sumRecent(): void {
    let requests = 0;
    let accepts = 0;
    for (let s = 0; s < RECENT_BUCKETS; s++) {
      const b = (this.current - s + BUCKETS) % BUCKETS;
      accepts += this.accepts[b]!;
      for (let l = 0; l < LEVELS; l++) requests += this.requests[b * LEVELS + l]!;
    }
    this.recentRequests = requests;
    this.recentAccepts = accepts;
  }
}
