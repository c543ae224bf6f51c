import type { RateLimitDecision } from '../policies/rate-limiter/decision.js';
import type { DecisionTarget } from './RedisGcraStore.js';
import type { RedisRateLimiter } from './RedisRateLimiter.js';
import type { GcraDecision } from './script.js';

/**
 * @internal One decision of a {@link RedisRateLimiter} sent to Redis: the store hands it the outcome, and it settles the call's
 * promise, with no promise of the store's own between them. `answer` makes the call's value
 * from the wait (ms, 0 when admitted) and Redis's decision (undefined when it fell back).
 */
abstract class Asked<T> implements DecisionTarget {
  constructor(
    protected readonly limiter: RedisRateLimiter,
    protected readonly key: string,
    private readonly permits: number,
    private readonly sent: number,
    private readonly probe: boolean,
    private readonly resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  decided(decision: GcraDecision): void {
    const wait = this.limiter.decided(this.key, this.permits, this.sent, decision);
    this.resolve(this.answer(wait, decision));
  }

  failed(error: unknown): void {
    let wait: number;
    try {
      wait = this.limiter.failed(this.key, this.permits, this.sent, this.probe, error);
    } catch (e) {
      this.reject(e);
      return;
    }
    this.resolve(this.answer(wait, undefined));
  }

  protected abstract answer(wait: number, decision: GcraDecision | undefined): T;
}

/** @internal One `tryAcquire` of a {@link RedisRateLimiter}: its value is the wait. */
export class Ask extends Asked<number> {
  protected answer(wait: number): number {
    return wait;
  }
}

/** @internal One `decide` of a {@link RedisRateLimiter}: its value is the whole decision, Redis's or the fallback's. */
export class DecideAsk extends Asked<RateLimitDecision> {
  protected answer(wait: number, decision: GcraDecision | undefined): RateLimitDecision {
    return decision !== undefined
      ? this.limiter.sharedDecision(decision)
      : this.limiter.fallbackDecision(this.key, wait, this.limiter.clock.now());
  }
}
