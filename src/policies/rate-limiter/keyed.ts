import type { InstanceView, KeyedGroup, KeyedInstancesView } from '../../protocol/kind.js';
import { type RateLimiterCounts, rateLimiterMetrics } from './metrics.js';
import type { ResolvedRateLimiterOptions } from './options.js';
import { type RateLimiter, rateLimiterFromResolved } from './RateLimiter.js';
import type { RateLimiterStats } from './stats.js';

/**
 * @internal The keyed rate limiters of one registry name. A limiter back to idle (its whole
 * burst free, nobody waiting) admits exactly what a new one would, so shelving keeps nothing;
 * one that is not would forget the permits taken if it were evicted, letting more calls
 * through than the rate.
 */
export class RateLimiterGroup
  implements KeyedGroup<RateLimiter, ResolvedRateLimiterOptions, RateLimiterCounts>
{
  readonly stride = 0;
  instances!: KeyedInstancesView<RateLimiter>;
  /** Counts of keys dropped or shelved (a shelved limiter keeps no numbers). */
  readonly retired: RateLimiterCounts = rateLimiterMetrics.counts();
  readonly latency = undefined;

  constructor(
    private readonly name: string,
    public options: ResolvedRateLimiterOptions,
  ) {}

  create(key: string): RateLimiter {
    return rateLimiterFromResolved(this.options, `${this.name}:${key}`);
  }

  revive(): void {}

  shelve(limiter: RateLimiter): boolean {
    if (this.isProtected(limiter) || limiter.limited.size !== 0) return false;
    limiter.addCounts(this.retired);
    limiter.dispose();
    return true;
  }

  retire(limiter: RateLimiter | undefined): void {
    if (limiter !== undefined) limiter.addCounts(this.retired);
  }

  isProtected(limiter: RateLimiter): boolean {
    // A waiter whose timer fires late (a busy event loop) can find the burst full again.
    return limiter.available < limiter.burst || limiter.stats().waiting !== 0;
  }

  dispose(limiter: RateLimiter): void {
    limiter.dispose();
  }

  check(limiter: RateLimiter, options: ResolvedRateLimiterOptions): void {
    limiter.checkOptions(options, limiter.name);
  }

  apply(options: ResolvedRateLimiterOptions, keep: readonly RateLimiter[]): void {
    this.options = options;
    for (const l of keep) l.applyOptions(options);
  }

  view(limiter: RateLimiter | undefined): InstanceView {
    if (limiter !== undefined) return rateLimiterView(limiter);
    const { burst } = this.options;
    const stats: RateLimiterStats = {
      admitted: 0,
      rejected: 0,
      waiting: 0,
      available: burst,
      burst,
    };
    return { stats };
  }
}

/** @internal A rate limiter in snapshots. */
export function rateLimiterView(limiter: RateLimiter): InstanceView {
  const stats: RateLimiterStats = { ...limiter.stats(), burst: limiter.burst };
  return { stats };
}
