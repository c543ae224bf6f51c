/**
 * @internal The GCRA decision, in whole microseconds: how long until `permits` are free at
 * `nowUs` for a key whose theoretical arrival time is `tat`. 0 (or less) means they are free
 * now, and taking them moves the TAT to {@link gcraTake}. The Redis script computes the same.
 */
export function gcraWait(
  tat: number,
  nowUs: number,
  permits: number,
  intervalUs: number,
  burst: number,
): number {
  return Math.max(tat, nowUs) + (permits - burst) * intervalUs - nowUs;
}

/** @internal The TAT after taking `permits` at `nowUs` (now or ahead of time). */
export function gcraTake(tat: number, nowUs: number, permits: number, intervalUs: number): number {
  return Math.max(tat, nowUs) + permits * intervalUs;
}
