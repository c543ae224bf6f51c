import type { ResolvedRetryOptions } from './options.js';

/**
 * @internal The delay in ms before retry number `retry` (1 for the first retry). `previous` is
 * the delay used before the last retry (0 before the first), needed by the decorrelated kinds.
 */
export function backoffDelay(o: ResolvedRetryOptions, retry: number, previous: number): number {
  const base = o.delay;
  const cap = o.maxDelay;
  const random = o.random;
  let d: number;
  switch (o.backoff) {
    case 'constant':
      d = base;
      break;
    case 'linear':
      d = base * retry;
      break;
    case 'exponential':
      d = base * o.multiplier ** (retry - 1);
      break;
    case 'decorrelated':
      // Random by construction; jitter is not applied on top.
      return Math.min(cap, uniform(random, base, Math.max(base, grown(previous, base))));
  }
  d = Math.min(cap, d);
  switch (o.jitter) {
    case 'none':
      return d;
    case 'full':
      return uniform(random, 0, d);
    case 'equal':
      return uniform(random, d / 2, d);
    case 'decorrelated':
      return Math.min(cap, uniform(random, d, Math.max(d, grown(previous, d))));
  }
}

/**
 * The top of a decorrelated draw: 3 × the previous delay. With none yet (the first retry, or
 * a pushback of 0) the base stands for it, so the first retries of clients that failed
 * together are spread over [base, 3 × base] rather than all landing on `base`.
 */
function grown(previous: number, base: number): number {
  return (previous > 0 ? previous : base) * 3;
}

function uniform(random: () => number, low: number, high: number): number {
  const r = random();
  // A random source outside [0, 1) would produce delays outside the documented range.
  const clamped = r >= 0 && r < 1 ? r : 0;
  return low + clamped * (high - low);
}
