/**
 * @internal Picks the calls a pipeline times for latency histograms: one in `every`, counted
 * down per pipeline, so deciding costs a decrement and a branch and most calls read no clock.
 */
export class LatencySampler {
  private left: number;

  constructor(readonly every: number) {
    this.left = every;
  }

  /** True for the call to time. */
  due(): boolean {
    if (--this.left !== 0) return false;
    this.left = this.every;
    return true;
  }
}
