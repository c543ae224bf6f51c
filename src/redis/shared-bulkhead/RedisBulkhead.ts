/**
 * The Redis bulkhead's public surface and the gate it is in pipelines: its options, stats,
 * listeners and refusals. How a call gets its permit is Admission.ts's; the permits and their
 * leases, the line, the wake-ups, the script calls and the store's health each have a file of
 * their own.
 */
import type { Clock } from '../../clock/Clock.js';
import { stackless } from '../../errors/BreakwaterError.js';
import { UsageError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import { RunsAlone } from '../../pipeline/RunsAlone.js';
import { BulkheadRejectedError, type BulkheadRejection } from '../../policies/bulkhead/errors.js';
import type { BulkheadRejectedEvent } from '../../policies/bulkhead/events.js';
import { brand } from '../../protocol/brand.js';
import {
  NEEDS_NOTHING,
  REJECTED,
  StepKind,
  type StepNeeds,
  WAIT,
  type WaitingExecution,
  type WaitingGate,
} from '../../protocol/step.js';
import { noteCodeBuilt } from '../../telemetry/codeBuilt.js';
import type { StoreStateEvent } from '../RedisRateLimiter.js';
import type { StoreFailureMode } from '../rateLimiterOptions.js';
import { Admission } from './Admission.js';
import {
  type RedisBulkheadOptions,
  type ResolvedRedisBulkheadOptions,
  resolveRedisBulkheadOptions,
} from './options.js';
import type { Permit, PermitLostEvent, RedisPermit } from './permit.js';
import { ScriptCalls } from './ScriptCalls.js';
import { StoreHealth } from './StoreHealth.js';
import { PromiseWaiter, type Waiter, WaitLine } from './WaitLine.js';

/** Counters of a {@link RedisBulkhead} since it was built, and what it holds now. */
export interface RedisBulkheadStats {
  /** Permits this process holds now (from Redis and from `onStoreFailure`). */
  readonly inFlight: number;
  /** Calls of this process waiting for a permit. */
  readonly queueLength: number;
  readonly maxConcurrent: number;
  /** Calls given a permit. */
  readonly admitted: number;
  readonly rejectionsByReason: { readonly full: number; readonly queueTimeout: number };
  /** Script calls sent to Redis (acquire, release and renewals). */
  readonly roundTrips: number;
  /** Permits granted by `onStoreFailure` while Redis did not answer. */
  readonly fallbackAdmissions: number;
  /** Permits whose lease ended while held. */
  readonly permitsLost: number;
  /** Processes whose bulkhead of this name was live at the last reply (0: none seen yet). */
  readonly liveInstances: number;
  /** Permits this process may hold while Redis is away (`onStoreFailure: 'local'`). */
  readonly localShare: number;
  /** False from a failed script call until Redis answers again. */
  readonly storeAvailable: boolean;
}

/** A call through a pipeline waiting at the bulkhead; its permit goes to the pool. */
class StepWaiter implements Waiter {
  constructor(
    private readonly admission: Admission,
    private readonly pooled: Permit[],
    private readonly exec: WaitingExecution,
    private readonly step: number,
    private readonly stamp: number,
  ) {}

  live(): boolean {
    return this.exec.queueLive(this.step, this.stamp);
  }

  admitted(permit: Permit): void {
    this.pooled.push(permit);
    this.exec.queueAdmitted(this.step);
  }

  rejected(error: Error): void {
    this.exec.queueRejected(this.step, error);
  }

  /** The executor is told of the wait only after `enqueue` returns: start then. */
  readonly start = (): void => this.admission.arrive(this);
}

/**
 * A bulkhead whose `maxConcurrent` is shared by every process using its name, through Redis.
 *
 * Each permit is a lease: a member of one sorted set scored by its expiry in Redis `TIME`,
 * taken by one script call and given back by one. A process renews all the permits it holds
 * every third of the lease with one script call (one timer per bulkhead, not keeping the
 * process alive), so the permits of a process that died come back when their lease ends. Each
 * permit carries a fencing token, strictly increasing across all processes, and a slot of its
 * own among `maxConcurrent`.
 *
 * A call that finds the bulkhead full waits (up to `maxQueue` calls per process, for up to
 * `queueTimeout`). Processes with calls waiting form a first-come line in Redis, and each
 * freed permit is handed to one of them (Redis pub/sub on its own channel), so a permit costs
 * the same round trips however many processes wait; a poll at a jittered interval and at the
 * end of the earliest lease covers lost messages.
 * While Redis does not answer, calls are admitted by `onStoreFailure`: by default a local
 * bulkhead holding this process's share of `maxConcurrent`. A lost permit (its lease ended
 * while its call still ran) is an event, never an error of the call.
 *
 * It guards efficiency, not correctness: a process paused for longer than a lease (or cut off
 * from Redis) keeps running calls whose permits others may have taken. Pass the slot and the
 * fencing token downstream where that matters: a store that keeps the highest token per slot
 * refuses the stale holder once its slot's new holder wrote, and never refuses a live one.
 *
 * Use it alone (`run`, `acquire`, `execute`) or as a gate of pipelines (calls wait for the
 * round trip; their fencing tokens are not handed to the function: use `run` for that).
 *
 * @example
 * ```ts
 * const db = new RedisBulkhead({ client, name: 'db', maxConcurrent: 20, maxQueue: 100 });
 * const rows = await db.run((permit) =>
 *   query(sql, { fence: { slot: permit.slot, token: permit.fencingToken } }),
 * );
 * ```
 */
export class RedisBulkhead extends RunsAlone implements WaitingGate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  /** It keeps no latency histogram. */
  readonly latencyEvery = 0;
  /** Always true: a call waits for the round trip to Redis. */
  readonly mayWait = true;
  readonly name: string;
  readonly clock: Clock;
  /** This process's id in Redis. */
  readonly instanceId: string;
  /**
   * The Redis keys: the permits' sorted set, the fencing token, the live instances, the
   * instances with calls waiting.
   */
  readonly keys: {
    readonly permits: string;
    readonly fence: string;
    readonly instances: string;
    readonly waiting: string;
  };
  /** This process's pub/sub channel: a release elsewhere wakes it there when its turn comes. */
  readonly channel: string;
  private readonly o: ResolvedRedisBulkheadOptions;
  private readonly calls: ScriptCalls;
  private readonly health: StoreHealth;
  private readonly line: WaitLine;
  private readonly admission: Admission;
  /** Permits of pipeline calls: any one is given back when such a call ends. */
  private readonly pooled: Permit[] = [];
  private stamp = 0;
  private disposed = false;
  private nFull = 0;
  private nTimeout = 0;
  private readonly fullError: BulkheadRejectedError;
  private readonly timeoutError: BulkheadRejectedError;
  /** @internal */ readonly rejected = new Listeners<BulkheadRejectedEvent>();
  /** @internal */ readonly stateChanged = new Listeners<StoreStateEvent>();
  /** @internal */ readonly permitLost = new Listeners<PermitLostEvent>();

  constructor(options: RedisBulkheadOptions) {
    super();
    const o = resolveRedisBulkheadOptions(options);
    this.o = o;
    this.name = o.name;
    this.clock = o.clock;
    this.instanceId = o.instanceId;
    const base = `${o.prefix}{${o.name}}:bulkhead:`;
    this.keys = {
      permits: `${base}permits`,
      fence: `${base}fence`,
      instances: `${base}instances`,
      waiting: `${base}waiting`,
    };
    const channelPrefix = `${base}freed:`;
    this.channel = `${channelPrefix}${o.instanceId}`;
    this.calls = new ScriptCalls(o, this.keys, channelPrefix);
    this.health = new StoreHealth(o.clock, o.probeInterval, this.stateChanged);
    const refuse = (waiter: Waiter, reason: BulkheadRejection) => this.refuse(waiter, reason);
    this.line = new WaitLine(o.clock, o.maxQueue, o.queueTimeout, (waiter) =>
      refuse(waiter, 'queue-timeout'),
    );
    this.admission = new Admission(
      o.name,
      o.clock,
      o,
      this.calls,
      this.health,
      this.line,
      refuse,
      this.permitLost,
      this.channel,
      options.subscriber,
      options.client,
    );
    this.fullError = stackless(() => new BulkheadRejectedError(o.name, 'full', o.maxConcurrent));
    this.timeoutError = stackless(
      () => new BulkheadRejectedError(o.name, 'queue-timeout', o.maxConcurrent),
    );
    for (const warning of o.adapter.warnings?.() ?? []) o.onWarning(warning);
    if (options.name !== undefined) noteCodeBuilt('redisBulkhead', o.name, this);
  }

  /** The `maxConcurrent` option: permits across every process. */
  get maxConcurrent(): number {
    return this.o.maxConcurrent;
  }

  /** The `onStoreFailure` option. */
  get onStoreFailure(): StoreFailureMode {
    return this.o.onStoreFailure;
  }

  /** Permits this process holds now. */
  get inFlight(): number {
    return this.admission.leases.inFlight;
  }

  /** Calls of this process waiting for a permit now. */
  get queueLength(): number {
    return this.line.length;
  }

  /** False from a failed script call until Redis answers again. */
  get storeAvailable(): boolean {
    return this.health.available;
  }

  /**
   * Permits this process may hold while Redis is away, with `onStoreFailure: 'local'`:
   * `floor(maxConcurrent / instances)`, 0 when processes outnumber the limit (so the shares
   * never sum above it), and 1 before any instance count is known.
   */
  get localShare(): number {
    return this.admission.localShare;
  }

  /** Counters since the bulkhead was built, and what it holds now. */
  stats(): RedisBulkheadStats {
    return {
      inFlight: this.inFlight,
      queueLength: this.queueLength,
      maxConcurrent: this.o.maxConcurrent,
      admitted: this.admission.admitted,
      rejectionsByReason: { full: this.nFull, queueTimeout: this.nTimeout },
      roundTrips: this.calls.roundTrips,
      fallbackAdmissions: this.admission.leases.fallbackAdmissions,
      permitsLost: this.admission.leases.permitsLost,
      liveInstances: this.health.live,
      localShare: this.localShare,
      storeAvailable: this.health.available,
    };
  }

  /**
   * Takes a permit, waiting in line when the bulkhead is full (see `maxQueue`). Rejects with
   * `BulkheadRejectedError` (reason `'full'` or `'queue-timeout'`), with the signal's reason
   * when `signal` aborts, and with UsageError once disposed; never because of Redis (see
   * `onStoreFailure`). Give the permit back with `release()` on every path.
   */
  acquire(options?: { readonly signal?: AbortSignal }): Promise<RedisPermit> {
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<RedisPermit>((resolve, reject) => {
      this.admission.arrive(new PromiseWaiter(resolve, reject, signal));
    });
  }

  /**
   * Runs `fn` with a permit, giving it back when `fn` settles (whatever the outcome). Rejects
   * as {@link acquire} does when no permit comes, and with what `fn` throws.
   *
   * @example
   * ```ts
   * await bulkhead.run((permit) => store.write(doc, { slot: permit.slot, fence: permit.fencingToken }));
   * ```
   */
  async run<T>(
    fn: (permit: RedisPermit) => T | PromiseLike<T>,
    options?: { readonly signal?: AbortSignal },
  ): Promise<T> {
    const permit = await this.acquire(options);
    try {
      return await fn(permit);
    } finally {
      this.admission.releasePermit(permit as Permit);
    }
  }

  /** Calls `listener` when the bulkhead refuses a call. */
  onRejected(listener: (event: BulkheadRejectedEvent) => void): Disposer {
    return this.rejected.add(listener);
  }

  /** Calls `listener` when Redis stops or starts answering. */
  onStoreStateChange(listener: (event: StoreStateEvent) => void): Disposer {
    return this.stateChanged.add(listener);
  }

  /** Calls `listener` when a permit's lease ended while its call still held it. */
  onPermitLost(listener: (event: PermitLostEvent) => void): Disposer {
    return this.permitLost.add(listener);
  }

  /**
   * Stops: waiting calls are refused with UsageError, the heartbeat and poll timers are
   * cancelled, the subscription ends (a connection the bulkhead opened is closed), listeners
   * are removed. Permits still held are given back when their calls end, as before; they are
   * no longer renewed. The client is left as it is.
   */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const error = new UsageError(`Bulkhead "${this.name}" was disposed`);
    this.health.stop();
    this.admission.stop(error);
    this.rejected.clear();
    this.stateChanged.clear();
    this.permitLost.clear();
  }

  // ---- the gate protocol ----------------------------------------------------------------------

  /** Gate protocol (`Gate.needs`): called by a pipeline's executor, not by users. */
  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, mayWait: true, callSlot: true };
  }

  /**
   * Asks to wait for the round trip; while Redis is away (and no probe is due),
   * decides at once by `onStoreFailure`.
   */
  admit(): number {
    if (this.health.available || this.disposed || this.health.probeDue()) return WAIT;
    const mode = this.o.onStoreFailure;
    if (mode === 'closed') {
      this.refused('full');
      return REJECTED;
    }
    if (mode === 'open' || this.inFlight < this.localShare) {
      this.pooled.push(this.admission.admitLocally());
      return 0;
    }
    if (this.line.hasRoom()) return WAIT;
    this.refused('full');
    return REJECTED;
  }

  /** Gate protocol ({@link WaitingGate.enqueue}): called by a pipeline's executor, not by users. */
  enqueue(exec: WaitingExecution, step: number): number {
    const stamp = ++this.stamp;
    queueMicrotask(new StepWaiter(this.admission, this.pooled, exec, step, stamp).start);
    return stamp;
  }

  /** A waiting call gave up: its place is skipped when reached. */
  leave(): void {}

  /** Gives back the permit of a pipeline call (any one of the pool: all are alike). */
  release(): void {
    const permit = this.pooled.pop();
    if (permit !== undefined) this.admission.releasePermit(permit);
  }

  /** Gate protocol (`Gate.releaseSuccess`): called by a pipeline's executor, not by users. */
  releaseSuccess(): void {
    this.release();
  }

  /** Gate protocol (`Gate.classifyError`): called by a pipeline's executor, not by users. */
  classifyError(): 0 {
    return 0;
  }

  /** Gate protocol (`Gate.classifyResult`): called by a pipeline's executor, not by users. */
  classifyResult(): 0 {
    return 0;
  }

  /** Gate protocol (`Gate.rejection`): called by a pipeline's executor, not by users. */
  rejection(): BulkheadRejectedError {
    return this.error('full');
  }

  // ---- refusals ---------------------------------------------------------------------------------

  private refuse(waiter: Waiter, reason: BulkheadRejection): void {
    this.refused(reason);
    waiter.rejected(this.error(reason));
  }

  private refused(reason: BulkheadRejection): void {
    if (reason === 'full') this.nFull++;
    else this.nTimeout++;
    if (this.rejected.size !== 0) {
      this.rejected.emit({ reason, inFlight: this.inFlight, queued: this.queueLength });
    }
  }

  private error(reason: BulkheadRejection): BulkheadRejectedError {
    if (this.o.debug) return new BulkheadRejectedError(this.name, reason, this.o.maxConcurrent);
    return reason === 'full' ? this.fullError : this.timeoutError;
  }
}

brand(RedisBulkhead, 'RedisBulkhead');

/**
 * A {@link RedisBulkhead}: `maxConcurrent` calls in flight across every process sharing its
 * name through Redis.
 */
export function redisBulkhead(options: RedisBulkheadOptions): RedisBulkhead {
  return new RedisBulkhead(options);
}
