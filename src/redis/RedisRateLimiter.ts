import type { Clock } from '../clock/Clock.js';
import { Wakeups } from '../clock/Wakeups.js';
import { stackless } from '../errors/BreakwaterError.js';
import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { type Disposer, Listeners } from '../events/Listeners.js';
import { RateLimitedError } from '../policies/rate-limiter/errors.js';
import type { RateLimitedEvent } from '../policies/rate-limiter/events.js';
import { gcraTake, gcraWait } from '../policies/rate-limiter/gcra.js';
import {
  type ResolvedRateLimiterOptions,
  resolveRateLimiterOptions,
} from '../policies/rate-limiter/options.js';
import type { AcquireOptions } from '../policies/rate-limiter/RateLimiter.js';
import { duration, integer, keyError, numberIn, oneOf } from '../validation/validate.js';
import { type GcraDecision, RedisGcraStore } from './RedisGcraStore.js';
import {
  REDIS_LIMITER_KEYS,
  type RedisRateLimiterOptions,
  redisRateLimiterDefaults,
  type StoreFailureMode,
} from './rateLimiterOptions.js';

/** Emitted when Redis stops or starts answering a limiter's decisions. */
export interface StoreStateEvent {
  /** True when Redis answers again; false when the limiter switched to `onStoreFailure`. */
  readonly available: boolean;
  /** The failure, when `available` is false. */
  readonly error?: unknown;
}

/** Counters of a {@link RedisRateLimiter}. */
export interface RedisRateLimiterStats {
  readonly admitted: number;
  readonly rejected: number;
  /** Decisions sent to Redis. */
  readonly roundTrips: number;
  /** Refusals answered by the negative cache, without a round trip. */
  readonly cachedRefusals: number;
  /** Admissions paid with leased permits, without a round trip. */
  readonly leasedAdmissions: number;
  /** Decisions made by `onStoreFailure`: failed ones, and all while Redis was away. */
  readonly fallbackDecisions: number;
  /** False from the switch to `onStoreFailure` until Redis answers again. */
  readonly storeAvailable: boolean;
}

/** Permits a process took ahead in one decision, to spend until `until` (ms of its clock). */
interface Lease {
  left: number;
  until: number;
  /** When the key's backlog after the decision ends: how much the next lease may take. */
  backlogUntil: number;
  /** A decision asking for a lease on this key is on its way: others ask for their own only. */
  asking: boolean;
  /** The last decision was a refusal: the key is at its limit, where leases would go unspent. */
  refused: boolean;
}

/** A caller of `acquire` waiting for the time its refusal named, to ask again. */
class Retry {
  done = false;
  constructor(
    readonly run: () => void,
    readonly fail: (reason: unknown) => void,
  ) {}
  wake(): void {
    if (!this.done) this.run();
  }
}

/**
 * A GCRA rate limit shared by every process through Redis: one key per limited key, one Lua
 * script and one round trip per decision, Redis `TIME` as the only clock. The same limit as
 * `KeyedRateLimiter`, decided the same way.
 *
 * Each decision has its own deadline (`timeout`); a decision Redis does not answer in time (or
 * that fails) is made by `onStoreFailure`. Once decisions have failed for `timeout` ms in a row
 * (a failed one sent `timeout` ms or more after the first, with no reply between) the limiter
 * stops asking Redis: every call is decided by `onStoreFailure`, and one decision per
 * `probeInterval` (never two at once) is sent to Redis until it answers. So a stall of Redis
 * shorter than twice the timeout never switches it. The local fallback starts each key from
 * the state Redis last gave for it. A call that fell back never fails with a store error:
 * Redis's availability is an event ({@link onStoreStateChange}) and a counter.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { RedisRateLimiter } from 'breakwater/redis';
 * const client = new Redis({ lazyConnect: true, enableOfflineQueue: false,
 *   maxRetriesPerRequest: 0, retryStrategy: (times) => Math.min(times * 50, 500) });
 * await client.connect();
 * const perUser = new RedisRateLimiter({ client, name: 'api', limit: 100, period: 60_000,
 *   localShare: 1 / 4 });
 * const wait = await perUser.tryAcquire(userId);   // 0: admitted; else ms until a permit is free
 * ```
 */
export class RedisRateLimiter {
  readonly name: string;
  readonly clock: Clock;
  /** The Redis side: keys, script, deadlines. */
  readonly store: RedisGcraStore;
  private readonly o: ResolvedRateLimiterOptions;
  private readonly mode: StoreFailureMode;
  private readonly probeInterval: number;
  /**
   * The local fallback's state (`onStoreFailure: 'local'`): per key, its TAT in µs of `clock`,
   * set from every reply of Redis (the key's TAT then, no earlier than it can be) and moved by
   * the local decisions.
   */
  private readonly localTats: Map<string, number> | undefined;
  /** The local fallback's GCRA: `localShare` of the rate, of the burst. */
  private readonly localIntervalUs: number;
  private readonly localBurst: number;
  /** Per key, a lower bound of its TAT in ms of `clock`, learnt from a refusal. */
  private readonly refusedUntil: Map<string, number> | undefined;
  /** Keys whose cached refusal ran out and whose one decision on Redis is on its way. */
  private readonly asking = new Set<string>();
  private readonly maxKeys: number;
  private readonly leaseSize: number;
  /** Per key: leased permits, or the backlog seen at the last decision (`left` 0). */
  private readonly leases: Map<string, Lease> | undefined;
  private available = true;
  /** When the first decision that failed since Redis last answered one was sent (or +∞). */
  private failingSince = Number.POSITIVE_INFINITY;
  /** While Redis is away: a probe is on its way, so no other decision goes to Redis. */
  private probing = false;
  /** Round trips' time, a moving average in ms: no lease is asked that would end before it. */
  private rtt = 0;
  private nextProbe = 0;
  private readonly error: RateLimitedError;
  private readonly retries = new Set<Retry>();
  private disposed = false;
  private nAdmitted = 0;
  private nRejected = 0;
  private nRoundTrips = 0;
  private nCached = 0;
  private nLeased = 0;
  private nFallback = 0;
  /** @internal */ readonly stateChanged = new Listeners<StoreStateEvent>();
  /** @internal */ readonly limited = new Listeners<RateLimitedEvent>();

  constructor(options: RedisRateLimiterOptions) {
    const o = resolveRateLimiterOptions(options, REDIS_LIMITER_KEYS);
    this.o = o;
    this.name = o.name;
    this.clock = o.clock;
    const d = redisRateLimiterDefaults;
    this.mode = oneOf(options.onStoreFailure, 'onStoreFailure', d.onStoreFailure, [
      'local',
      'open',
      'closed',
    ]);
    const share = numberIn(options.localShare, 'localShare', d.localShare, 0, 1, true);
    this.probeInterval = duration(options.probeInterval, 'probeInterval', d.probeInterval, 1);
    this.maxKeys = integer(options.maxKeys, 'maxKeys', d.maxKeys, 1, 2_147_483_647);
    if (options.negativeCache !== undefined && typeof options.negativeCache !== 'boolean') {
      throw new OptionsError('negativeCache', options.negativeCache, 'a boolean');
    }
    this.refusedUntil = options.negativeCache === false ? undefined : new Map();
    this.leaseSize = integer(options.lease, 'lease', d.lease, 1, o.burst);
    this.leases = this.leaseSize > 1 ? new Map() : undefined;
    this.store = new RedisGcraStore({
      client: options.client,
      name: o.name,
      prefix: options.prefix,
      timeout: options.timeout ?? d.timeout,
      onWarning: options.onWarning,
      clock: o.clock,
    });
    this.localTats = this.mode === 'local' ? new Map() : undefined;
    this.localIntervalUs = o.intervalUs / share;
    this.localBurst = Math.max(1, Math.floor(o.burst * share));
    this.error = stackless(() => new RateLimitedError(o.name, o.clock, 0));
  }

  /** False from a failed decision until Redis answers again. */
  get storeAvailable(): boolean {
    return this.available;
  }

  /** Counters since the limiter was made. */
  stats(): RedisRateLimiterStats {
    return {
      admitted: this.nAdmitted,
      rejected: this.nRejected,
      roundTrips: this.nRoundTrips,
      cachedRefusals: this.nCached,
      leasedAdmissions: this.nLeased,
      fallbackDecisions: this.nFallback,
      storeAvailable: this.available,
    };
  }

  /**
   * Takes `permits` (default 1) for `key` if they are free now. Resolves with 0 when they were
   * taken, or else with the ms until they would be (nothing taken). Never rejects because of
   * Redis (see `onStoreFailure`); rejects with {@link OptionsError} for bad arguments.
   */
  tryAcquire(key: string, permits = 1): Promise<number> {
    const invalid = this.checkArguments(key, permits);
    if (invalid !== undefined) return Promise.reject(invalid);
    const now = this.clock.now();
    const lease = this.leases?.get(key);
    if (lease !== undefined && lease.left >= permits && now <= lease.until) {
      lease.left -= permits;
      this.nLeased++;
      this.nAdmitted++;
      return Promise.resolve(0);
    }
    const cached = this.cachedWait(key, permits, now);
    if (cached > 0) {
      this.nCached++;
      this.refuse(key, permits, cached, now);
      return Promise.resolve(cached);
    }
    let probe = false;
    if (!this.available) {
      if (this.probing || now < this.nextProbe) {
        // No decision goes to Redis: a key the cache let through must not wait for one.
        if (this.asking.delete(key)) this.refusedUntil!.delete(key);
        return Promise.resolve(this.fallback(key, permits, now));
      }
      this.probing = probe = true;
    }
    this.nRoundTrips++;
    const ask =
      lease === undefined || lease.asking || lease.refused
        ? permits
        : this.leaseFor(lease, permits, now);
    if (ask > permits) lease!.asking = true;
    return this.store
      .decide(
        key,
        permits,
        this.o.intervalUs,
        this.o.burst,
        undefined,
        ask > permits ? ask : undefined,
      )
      .then(
        (decision) => this.decided(key, permits, now, decision),
        (error: unknown) => this.failed(key, permits, now, probe, error),
      );
  }

  /**
   * Takes `permits` for `key`, waiting up to `maxWait` ms (default: the limiter's `maxWait`)
   * by asking again when its refusal said the permits would be free. Rejects with
   * {@link RateLimitedError} when that is further than `maxWait` from the call, with the
   * signal's reason when `signal` aborts.
   */
  acquire(key: string, permits = 1, options?: AcquireOptions): Promise<void> {
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const until = this.clock.now() + (options?.maxWait ?? this.o.maxWait);
    return new Promise<void>((resolve, reject) => {
      const retry = new Retry(
        () => ask(),
        (reason) => {
          finish();
          reject(reason);
        },
      );
      const onAbort = () => retry.fail(signal!.reason);
      const finish = () => {
        retry.done = true;
        this.retries.delete(retry);
        signal?.removeEventListener('abort', onAbort);
      };
      const ask = (): void => {
        this.tryAcquire(key, permits).then((wait) => {
          if (retry.done) return;
          if (wait === 0) {
            finish();
            resolve();
            return;
          }
          const now = this.clock.now();
          if (now + wait > until) {
            finish();
            this.error.freeAt = now + wait;
            reject(
              this.o.debug ? new RateLimitedError(this.name, this.clock, now + wait) : this.error,
            );
            return;
          }
          Wakeups.of(this.clock, true).schedule(now + wait, now, retry);
        }, retry.fail);
      };
      this.retries.add(retry);
      signal?.addEventListener('abort', onAbort);
      ask();
    });
  }

  /** Calls `listener` when Redis stops or starts answering. */
  onStoreStateChange(listener: (event: StoreStateEvent) => void): Disposer {
    return this.stateChanged.add(listener);
  }

  /** Calls `listener` when the limiter refuses permits for a key. */
  onRejected(listener: (event: RateLimitedEvent) => void): Disposer {
    return this.limited.add(listener);
  }

  /**
   * Stops: waiting `acquire` calls reject with {@link UsageError}, the store stops deciding,
   * listeners are removed. The client is left as it is (close it yourself).
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const error = new UsageError(`Rate limiter "${this.name}" was disposed`);
    for (const r of [...this.retries]) r.fail(error);
    this.store.dispose();
    this.refusedUntil?.clear();
    this.asking.clear();
    this.localTats?.clear();
    this.stateChanged.clear();
    this.limited.clear();
  }

  private decided(key: string, permits: number, sent: number, decision: GcraDecision): number {
    this.failingSince = Number.POSITIVE_INFINITY;
    if (!this.available) {
      this.probing = false;
      this.setAvailable(true, undefined);
    }
    if (this.asking.delete(key) && decision.allowed) this.refusedUntil!.delete(key);
    const received = this.clock.now();
    const rtt = received - sent;
    this.rtt = this.rtt === 0 ? rtt : this.rtt + (rtt - this.rtt) / 8;
    if (this.localTats !== undefined) {
      // The key's TAT after the decision, in our clock: the reply's time is no earlier than the
      // script's, so the fallback never starts a key emptier than Redis left it.
      const tatUs = received * 1_000 + decision.aheadUs + decision.granted * this.o.intervalUs;
      this.setLocal(this.localTats, key, tatUs);
    }
    if (this.leases !== undefined) {
      // Leased permits may be spent while the backlog the key had lasts (in our clock, from
      // the send time: never later than on Redis's).
      const aheadMs = decision.aheadUs / 1_000;
      const extra = decision.granted > permits ? decision.granted - permits : 0;
      let left = extra;
      let until = sent + aheadMs;
      const held = this.leases.get(key);
      if (held !== undefined && held.left > 0 && this.clock.now() <= held.until) {
        // Permits still held from an earlier lease are kept; all are spent by the earlier end.
        left += held.left;
        until = Math.min(until, held.until);
      }
      this.keep(this.leases, key, {
        left,
        until,
        backlogUntil: sent + aheadMs + (decision.granted * this.o.intervalUs) / 1_000,
        asking: false,
        refused: !decision.allowed,
      });
    }
    if (decision.allowed) {
      this.nAdmitted++;
      return 0;
    }
    const { intervalUs, burst } = this.o;
    const waitUs = decision.retryAfterUs;
    if (this.refusedUntil !== undefined) {
      // The key's TAT at the decision: a lower bound in our clock, taking the send time.
      this.remember(key, sent + (waitUs + (burst - permits) * intervalUs) / 1_000);
    }
    const wait = waitUs / 1_000;
    this.refuse(key, permits, wait, sent);
    return wait;
  }

  private failed(
    key: string,
    permits: number,
    sent: number,
    probe: boolean,
    error: unknown,
  ): number {
    if (this.disposed) throw error;
    if (this.asking.delete(key)) this.refusedUntil!.delete(key);
    const lease = this.leases?.get(key);
    if (lease !== undefined) lease.asking = false;
    if (probe) {
      // Only the probe's end moves the next probe: decisions sent before the switch that fail
      // later say nothing new.
      if (this.probing) {
        this.probing = false;
        this.nextProbe = sent + this.probeInterval;
      }
    } else if (this.available) {
      // One late reply, or a burst of them from one short stall, is no outage: switch only
      // once decisions sent `timeout` ms apart have both failed, with no reply between.
      if (sent < this.failingSince) this.failingSince = sent;
      if (sent - this.failingSince >= this.store.timeout) {
        this.nextProbe = sent + this.probeInterval;
        this.setAvailable(false, error);
      }
    }
    return this.fallback(key, permits, this.clock.now());
  }

  private fallback(key: string, permits: number, now: number): number {
    this.nFallback++;
    if (this.mode === 'open') {
      this.nAdmitted++;
      return 0;
    }
    const wait = this.mode === 'closed' ? this.probeInterval : this.localWait(key, permits, now);
    if (wait === 0) {
      this.nAdmitted++;
      return 0;
    }
    this.refuse(key, permits, wait, now);
    return wait;
  }

  /**
   * The local fallback's decision: takes `permits` for `key` at `now` if its share of the rate
   * has them (0), else the ms until it would. More permits than its share of the burst are
   * never free locally: they wait for Redis (a probe's time).
   */
  private localWait(key: string, permits: number, now: number): number {
    if (permits > this.localBurst) return this.probeInterval;
    const map = this.localTats!;
    const nowUs = now * 1_000;
    const tat = map.get(key) ?? nowUs;
    const waitUs = gcraWait(tat, nowUs, permits, this.localIntervalUs, this.localBurst);
    if (waitUs > 0) return waitUs / 1_000;
    this.setLocal(map, key, gcraTake(tat, nowUs, permits, this.localIntervalUs));
    return 0;
  }

  /** ms until `permits` could be free by the negative cache, or 0 when it knows nothing. */
  private cachedWait(key: string, permits: number, now: number): number {
    const map = this.refusedUntil;
    if (map === undefined) return 0;
    const tat = map.get(key);
    if (tat === undefined) return 0;
    const { intervalUs, burst } = this.o;
    const waitUs = gcraWait(tat * 1_000, now * 1_000, permits, intervalUs, burst);
    if (waitUs > 0) return waitUs / 1_000;
    // The refusal ran out: one caller asks Redis; the others are refused until it answers
    // (about a round trip), rather than all asking at once.
    if (this.asking.has(key)) return Math.max(this.rtt, 0.001);
    this.asking.add(key);
    return 0;
  }

  /**
   * Permits to ask for on a key last seen with a backlog until `last.backlogUntil`: as many as
   * that backlog can still hold, so no lease is taken on an idle key (it could not be spent).
   */
  private leaseFor(last: Lease, permits: number, now: number): number {
    const room = Math.floor(((last.backlogUntil - now - this.rtt) * 1_000) / this.o.intervalUs);
    return Math.max(permits, Math.min(this.leaseSize, room));
  }

  private remember(key: string, tat: number): void {
    this.keep(this.refusedUntil!, key, tat);
  }

  /**
   * Sets `key`'s local TAT, forgetting the oldest key past `maxKeys`. One map operation for a
   * known key (this runs on every reply): the order is of first use, not last, and a busy key
   * forgotten is set again by its next reply.
   */
  private setLocal(map: Map<string, number>, key: string, tatUs: number): void {
    map.set(key, tatUs);
    if (map.size > this.maxKeys) {
      for (const oldest of map.keys()) {
        map.delete(oldest);
        break;
      }
    }
  }

  /** Sets `key` in `map` as its most recent entry, forgetting the oldest past `maxKeys`. */
  private keep<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > this.maxKeys) {
      for (const oldest of map.keys()) {
        map.delete(oldest);
        break;
      }
    }
  }

  private refuse(key: string, permits: number, wait: number, now: number): void {
    this.nRejected++;
    this.error.freeAt = now + wait;
    if (this.limited.size !== 0) this.limited.emit({ permits, retryAfter: wait, key });
  }

  private setAvailable(available: boolean, error: unknown): void {
    this.available = available;
    if (this.stateChanged.size !== 0) {
      this.stateChanged.emit(available ? { available } : { available, error });
    }
  }

  private checkArguments(key: string, permits: number): Error | undefined {
    if (this.disposed) return new UsageError(`Rate limiter "${this.name}" was disposed`);
    const badKey = keyError(key);
    if (badKey !== undefined) return badKey;
    if (!Number.isInteger(permits) || permits < 1 || permits > this.o.burst) {
      return new OptionsError('permits', permits, `an integer in [1, ${this.o.burst}] (the burst)`);
    }
    return undefined;
  }
}
