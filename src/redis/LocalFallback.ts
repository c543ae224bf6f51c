import { gcraDecision, type RateLimitDecision } from '../policies/rate-limiter/decision.js';
import { gcraTake, gcraWait } from '../policies/rate-limiter/gcra.js';
import { setBounded } from './boundedMaps.js';

/**
 * @internal The decisions of a {@link RedisRateLimiter} with `onStoreFailure: 'local'` while
 * Redis does not answer: a GCRA in this process holding `localShare` of the rate and of the
 * burst, each key starting from the state Redis last gave for it.
 */
export class LocalFallback {
  /**
   * Per key, its TAT in µs of the limiter's clock, set from every reply of Redis (the key's
   * TAT then, no earlier than it can be) and moved by the local decisions.
   */
  private readonly tats = new Map<string, number>();

  constructor(
    private readonly intervalUs: number,
    private readonly burst: number,
    private readonly maxKeys: number,
    /** The wait answered for more permits than the local burst: until the next probe. */
    private readonly probeInterval: number,
  ) {}

  /** Sets `key`'s TAT, in µs of the limiter's clock, from a reply of Redis. */
  learn(key: string, tatUs: number): void {
    setBounded(this.tats, key, tatUs, this.maxKeys);
  }

  /**
   * Takes `permits` for `key` at `now` if this process's share of the rate has them (0), else
   * the ms until it would. More permits than its share of the burst are never free locally:
   * they wait for Redis (a probe's time).
   */
  take(key: string, permits: number, now: number): number {
    if (permits > this.burst) return this.probeInterval;
    const nowUs = now * 1_000;
    const tat = this.tats.get(key) ?? nowUs;
    const waitUs = gcraWait(tat, nowUs, permits, this.intervalUs, this.burst);
    if (waitUs > 0) return waitUs / 1_000;
    setBounded(this.tats, key, gcraTake(tat, nowUs, permits, this.intervalUs), this.maxKeys);
    return 0;
  }

  /**
   * The decision {@link take} made for `key` at `now` (`wait` ms, 0 when taken), with this
   * process's share of the rate as its limit: `degraded`, as Redis did not make it.
   */
  decision(key: string, wait: number, now: number): RateLimitDecision {
    const tat = this.tats.get(key);
    const aheadUs = tat === undefined ? 0 : tat - now * 1_000;
    return gcraDecision(wait, aheadUs, this.intervalUs, this.burst, true);
  }

  clear(): void {
    this.tats.clear();
  }
}
