import type { Clock } from '../clock/Clock.js';
import { stackless } from '../errors/BreakwaterError.js';
import { OptionsError, UsageError } from '../errors/OptionsError.js';
import { type Disposer, Listeners } from '../events/Listeners.js';
import { RunsAlone } from '../pipeline/RunsAlone.js';
import { gcraDecision, type RateLimitDecision } from '../policies/rate-limiter/decision.js';
import { RateLimitedError, refusalAt } from '../policies/rate-limiter/errors.js';
import type { RateLimitedEvent } from '../policies/rate-limiter/events.js';
import { gcraWait } from '../policies/rate-limiter/gcra.js';
import type { ResolvedRateLimiterOptions } from '../policies/rate-limiter/options.js';
import type { AcquireOptions } from '../policies/rate-limiter/RateLimiter.js';
import { brand } from '../protocol/brand.js';
import {
  NEEDS_NOTHING,
  Outcome,
  StepKind,
  type StepNeeds,
  WAIT,
  type WaitingExecution,
  type WaitingGate,
} from '../protocol/step.js';
import { noteCodeBuilt } from '../telemetry/codeBuilt.js';
import { keyError } from '../validation/validate.js';
import { Ask, DecideAsk } from './asks.js';
import { keepLatest } from './boundedMaps.js';
import { LocalFallback } from './LocalFallback.js';
import { type Lease, leaseAfter, permitsToAsk } from './leases.js';
import { type PermitWaiter, PermitWaits } from './PermitWaits.js';
import { GcraRequest, RedisGcraStore } from './RedisGcraStore.js';
import {
  type RedisRateLimiterOptions,
  redisRateLimiterDefaults,
  resolveRedisLimiterOptions,
  type StoreFailureMode,
} from './rateLimiterOptions.js';
import type { GcraDecision } from './script.js';

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

/** A call through a pipeline waiting at the limiter for its permit. */
class StepWait implements PermitWaiter {
  constructor(
    private readonly exec: WaitingExecution,
    private readonly step: number,
    private readonly stamp: number,
  ) {}

  live(): boolean {
    return this.exec.queueLive(this.step, this.stamp);
  }

  admitted(): void {
    this.exec.queueAdmitted(this.step);
  }

  rejected(reason: unknown): void {
    this.exec.queueRejected(this.step, reason as Error);
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
 * It is also a policy: a gate of pipelines whose calls wait for the decision of Redis and take
 * one permit of the `key` option each, `execute` and `tryExecute` for a call through it alone,
 * and a kind (`redisRateLimiterKind`) that a registry takes in its `kinds` option.
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
 * await pipeline(perUser, timeout(2_000)).execute(() => fetch(url));  // key: the `key` option
 * ```
 */
export class RedisRateLimiter extends RunsAlone implements WaitingGate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  /** A rate limiter keeps no latency histogram. */
  readonly latencyEvery = 0;
  /** Always true: a call through a pipeline waits for the decision of Redis. */
  readonly mayWait = true;
  readonly name: string;
  readonly clock: Clock;
  /** The key calls through a pipeline (or `execute`) take their permit from. */
  readonly key: string;
  /** The Redis side: keys, script, deadlines. */
  readonly store: RedisGcraStore;
  private readonly o: ResolvedRateLimiterOptions;
  private readonly mode: StoreFailureMode;
  private readonly probeInterval: number;
  /** The local fallback (`onStoreFailure: 'local'`). */
  private readonly local: LocalFallback | undefined;
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
  private error: RateLimitedError;
  private readonly waits: PermitWaits;
  /** The request for one permit without a lease, the common decision: made once. */
  private readonly oneRequest: GcraRequest;
  private disposed = false;
  /** The stamp of the last call that waited at the limiter in a pipeline. */
  private stamp = 0;
  private nAdmitted = 0;
  private nRejected = 0;
  private nRoundTrips = 0;
  private nCached = 0;
  private nLeased = 0;
  private nFallback = 0;
  /** @internal */ readonly stateChanged = new Listeners<StoreStateEvent>();
  /** @internal */ readonly limited = new Listeners<RateLimitedEvent>();

  constructor(options: RedisRateLimiterOptions) {
    super();
    const r = resolveRedisLimiterOptions(options);
    const o = r.rate;
    this.key = r.key;
    this.o = o;
    this.name = o.name;
    this.clock = o.clock;
    this.mode = r.onStoreFailure;
    this.probeInterval = r.probeInterval;
    this.maxKeys = r.maxKeys;
    this.refusedUntil = r.negativeCache ? new Map() : undefined;
    this.leaseSize = r.lease;
    this.leases = this.leaseSize > 1 ? new Map() : undefined;
    this.store = new RedisGcraStore({
      client: options.client,
      name: o.name,
      prefix: options.prefix,
      timeout: options.timeout ?? redisRateLimiterDefaults.timeout,
      onWarning: options.onWarning,
      clock: o.clock,
    });
    this.local =
      this.mode === 'local'
        ? new LocalFallback(
            o.intervalUs / r.localShare,
            Math.max(1, Math.floor(o.burst * r.localShare)),
            r.maxKeys,
            r.probeInterval,
          )
        : undefined;
    this.oneRequest = new GcraRequest(o.intervalUs, o.burst, 1, undefined, undefined);
    this.error = stackless(() => new RateLimitedError(o.name, o.clock, 0));
    this.waits = new PermitWaits(this, o.clock, (freeAt) => {
      this.error = refusalAt(this.error, o.name, o.clock, freeAt, o.debug);
      return this.error;
    });
    if (options.name !== undefined) noteCodeBuilt('redisRateLimiter', o.name, this);
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
    if (lease !== undefined && this.spendLease(lease, permits, now)) return Promise.resolve(0);
    const cached = this.cachedWait(key, permits, now);
    if (cached > 0) {
      this.nCached++;
      this.refuse(key, permits, cached, now);
      return Promise.resolve(cached);
    }
    const probe = !this.available;
    if (!this.goesToRedis(key, now)) return Promise.resolve(this.fallback(key, permits, now));
    const request = this.requestFor(lease, permits, now);
    return new Promise<number>((resolve, reject) => {
      this.store.send(key, request, new Ask(this, key, permits, now, probe, resolve, reject), now);
    });
  }

  /**
   * {@link tryAcquire} with the state it leaves, for `RateLimit` headers: takes `permits`
   * (default 1) for `key` if they are free now, with the same checks, errors, events and
   * counters, and resolves with the decision (see {@link RateLimitDecision}).
   *
   * - Decided by Redis: the numbers of the script's reply, the key's state shared by every
   *   process (`remaining` is what any of them could take at that moment).
   * - Paid with a leased permit (`lease` option): leased permits count as taken from the
   *   moment Redis granted them, spent or not (the lease is on the key's TAT), so `remaining`
   *   is the key's state at the lease's reply, refilled since, and never counts the permits
   *   this process still holds: it never reports more than another process sharing the key
   *   could take, unless that other process took permits since this one's last round trip
   *   (seen at the next one).
   * - Refused by the negative cache: estimated from the last refusal, `remaining` below
   *   `permits`.
   * - Decided by `onStoreFailure` (Redis did not answer): `degraded: true` and the fallback's
   *   numbers: with `'local'`, the local share (its burst as `limit`); with `'open'`, the
   *   whole burst remaining; with `'closed'`, nothing remaining, `retryAfterMs` the
   *   `probeInterval` and `resetMs` the window.
   *
   * Never rejects because of Redis; rejects with {@link OptionsError} for bad arguments.
   *
   * @example
   * ```ts
   * const d = await perUser.decide(userId);
   * if (!d.allowed) return reply.status(429).header('Retry-After', Math.ceil(d.retryAfterMs / 1000));
   * ```
   */
  decide(key: string, permits = 1): Promise<RateLimitDecision> {
    const invalid = this.checkArguments(key, permits);
    if (invalid !== undefined) return Promise.reject(invalid);
    const now = this.clock.now();
    const { intervalUs, burst } = this.o;
    const lease = this.leases?.get(key);
    if (lease !== undefined && this.spendLease(lease, permits, now)) {
      return Promise.resolve(gcraDecision(0, lease.tatUs - now * 1_000, intervalUs, burst, false));
    }
    const cached = this.cachedWait(key, permits, now);
    if (cached > 0) {
      this.nCached++;
      this.refuse(key, permits, cached, now);
      return Promise.resolve(this.cachedDecision(key, permits, cached, now));
    }
    const probe = !this.available;
    if (!this.goesToRedis(key, now)) {
      return Promise.resolve(this.fallbackDecision(key, this.fallback(key, permits, now), now));
    }
    const request = this.requestFor(lease, permits, now);
    return new Promise<RateLimitDecision>((resolve, reject) => {
      const ask = new DecideAsk(this, key, permits, now, probe, resolve, reject);
      this.store.send(key, request, ask, now);
    });
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
    return this.waits.wait(key, permits, until, signal);
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
    this.waits.failAll(error);
    this.store.dispose();
    this.refusedUntil?.clear();
    this.asking.clear();
    this.local?.clear();
    this.stateChanged.clear();
    this.limited.clear();
  }

  // ---- the gate protocol ----------------------------------------------------------------------

  /** A call waits for the decision of Redis, unless leased permits pay for it. */
  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, mayWait: true, callSlot: true };
  }

  /** Admits at once (0) with a leased permit; otherwise asks to wait ({@link WAIT}). */
  admit(): number {
    const lease = this.leases?.get(this.key);
    if (lease !== undefined && !this.disposed && this.spendLease(lease, 1, this.clock.now())) {
      return 0;
    }
    return WAIT;
  }

  /**
   * Asks for the call's permit as `acquire` does (waiting up to `maxWait`) and tells
   * `exec` the answer; returns its stamp.
   */
  enqueue(exec: WaitingExecution, step: number): number {
    const stamp = ++this.stamp;
    const until = this.clock.now() + this.o.maxWait;
    this.waits.waitFor(this.key, 1, until, new StepWait(exec, step, stamp));
    return stamp;
  }

  /**
   * A waiting call gave up (its signal aborted or its deadline passed): it asks no
   * more, and a permit Redis grants it meanwhile is not given back.
   */
  leave(): void {}

  /** A rate limiter does not count outcomes. */
  release(): void {}

  /** Gate protocol (`Gate.releaseSuccess`): called by a pipeline's executor, not by users. */
  releaseSuccess(): void {}

  /** Gate protocol (`Gate.classifyError`): called by a pipeline's executor, not by users. */
  classifyError(): Outcome {
    return Outcome.Success;
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(): Outcome {
    return Outcome.Success;
  }

  /** The error of the last refusal. */
  rejection(): RateLimitedError {
    return this.error;
  }

  /**
   * Whether a decision at `now` goes to Redis: not while Redis is away, but for one probe per
   * `probeInterval` (this one then is the probe).
   */
  private goesToRedis(key: string, now: number): boolean {
    if (this.available) return true;
    if (this.probing || now < this.nextProbe) {
      // No decision goes to Redis: a key the cache let through must not wait for one.
      if (this.asking.delete(key)) this.refusedUntil!.delete(key);
      return false;
    }
    this.probing = true;
    return true;
  }

  /** The request for `permits` on a key holding `lease`, with a lease of its own when it fits. */
  private requestFor(lease: Lease | undefined, permits: number, now: number): GcraRequest {
    this.nRoundTrips++;
    const ask =
      lease === undefined || lease.asking || lease.refused
        ? permits
        : permitsToAsk(lease, permits, now, this.rtt, this.o.intervalUs, this.leaseSize);
    if (ask > permits) lease!.asking = true;
    return permits === 1 && ask === 1
      ? this.oneRequest
      : new GcraRequest(
          this.o.intervalUs,
          this.o.burst,
          permits,
          undefined,
          ask > permits ? ask : undefined,
        );
  }

  /** @internal The decision Redis made, as `decide` reports it. */
  sharedDecision(decision: GcraDecision): RateLimitDecision {
    const { intervalUs, burst } = this.o;
    const aheadUs = decision.aheadUs + decision.granted * intervalUs;
    return gcraDecision(decision.retryAfterUs / 1_000, aheadUs, intervalUs, burst, false);
  }

  /** @internal The decision `onStoreFailure` made for `key` at `now`: `wait` ms, 0 admitted. */
  fallbackDecision(key: string, wait: number, now: number): RateLimitDecision {
    if (this.local !== undefined) return this.local.decision(key, wait, now);
    const { intervalUs, burst } = this.o;
    const aheadUs = this.mode === 'open' ? 0 : burst * intervalUs;
    return gcraDecision(wait, aheadUs, intervalUs, burst, true);
  }

  /** A refusal of the negative cache: the key's TAT is the lower bound its last refusal gave. */
  private cachedDecision(
    key: string,
    permits: number,
    wait: number,
    now: number,
  ): RateLimitDecision {
    const { intervalUs, burst } = this.o;
    const tat = this.refusedUntil!.get(key)!;
    const d = gcraDecision(wait, (tat - now) * 1_000, intervalUs, burst, false);
    // Refused while another call asks Redis (see cachedWait): the estimate may have room.
    return d.remaining < permits ? d : { ...d, remaining: permits - 1 };
  }

  private spendLease(lease: Lease, permits: number, now: number): boolean {
    if (lease.left < permits || now > lease.until) return false;
    lease.left -= permits;
    this.nLeased++;
    this.nAdmitted++;
    return true;
  }

  /** @internal */
  decided(key: string, permits: number, sent: number, decision: GcraDecision): number {
    this.failingSince = Number.POSITIVE_INFINITY;
    if (!this.available) {
      this.probing = false;
      this.setAvailable(true, undefined);
    }
    if (this.asking.delete(key) && decision.allowed) this.refusedUntil!.delete(key);
    const received = this.clock.now();
    const rtt = received - sent;
    this.rtt = this.rtt === 0 ? rtt : this.rtt + (rtt - this.rtt) / 8;
    // The key's TAT after the decision, in our clock: the reply's time is no earlier than the
    // script's, so the fallback never starts a key emptier than Redis left it, nor does a
    // lease report more remaining than Redis has.
    const tatUs = received * 1_000 + decision.aheadUs + decision.granted * this.o.intervalUs;
    this.local?.learn(key, tatUs);
    if (this.leases !== undefined) {
      const lease = leaseAfter(
        this.leases.get(key),
        permits,
        sent,
        decision,
        this.o.intervalUs,
        this.clock,
        tatUs,
      );
      keepLatest(this.leases, key, lease, this.maxKeys);
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

  /** @internal Throws `error` when the limiter was disposed meanwhile. */
  failed(key: string, permits: number, sent: number, probe: boolean, error: unknown): number {
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
    const wait = this.mode === 'closed' ? this.probeInterval : this.local!.take(key, permits, now);
    if (wait === 0) {
      this.nAdmitted++;
      return 0;
    }
    this.refuse(key, permits, wait, now);
    return wait;
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

  private remember(key: string, tat: number): void {
    keepLatest(this.refusedUntil!, key, tat, this.maxKeys);
  }

  private refuse(key: string, permits: number, wait: number, now: number): void {
    this.nRejected++;
    this.error = refusalAt(this.error, this.name, this.clock, now + wait, this.o.debug);
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

brand(RedisRateLimiter, 'RedisRateLimiter');
