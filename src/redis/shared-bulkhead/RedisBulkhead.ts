import type { Clock, TimerHandle } from '../../clock/Clock.js';
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
import { type DeadlineEntry, DeadlineFifo } from '../DeadlineFifo.js';
import type { StoreStateEvent } from '../RedisRateLimiter.js';
import type { StoreFailureMode } from '../rateLimiterOptions.js';
import {
  type RedisBulkheadOptions,
  type ResolvedRedisBulkheadOptions,
  resolveRedisBulkheadOptions,
} from './options.js';
import { Script, ScriptRunner, type ScriptTarget } from './ScriptRunner.js';
import {
  type AcquireReply,
  acquireReplyOf,
  BULKHEAD_ACQUIRE_SCRIPT,
  BULKHEAD_ACQUIRE_SCRIPT_SHA,
  BULKHEAD_RELEASE_SCRIPT,
  BULKHEAD_RELEASE_SCRIPT_SHA,
  BULKHEAD_RENEW_SCRIPT,
  BULKHEAD_RENEW_SCRIPT_SHA,
  releaseReplyOf,
  renewReplyOf,
} from './scripts.js';
import { makeSubscriber, type Subscriber } from './subscriber.js';

/** A permit of a {@link RedisBulkhead}: one call's place among `maxConcurrent`. */
export interface RedisPermit {
  /**
   * Strictly increasing across every process sharing the bulkhead, and so along the holders of
   * each {@link slot}. Pass it downstream with the slot: a store that keeps the highest token
   * it has seen per slot and refuses a lower one refuses every write of a holder whose slot
   * was since given to another (its lease ended: a paused process, a FLUSHALL), and none of a
   * live holder. Undefined for a permit granted by `onStoreFailure` while Redis was away (it
   * has no lease).
   */
  readonly fencingToken: number | undefined;
  /**
   * Which of the `maxConcurrent` places the permit holds, in [0, maxConcurrent): no two live
   * permits hold the same slot at once. The key of a store's fencing check (with the
   * bulkhead's name). Undefined for a permit granted by `onStoreFailure`.
   */
  readonly slot: number | undefined;
  /** True when granted by `onStoreFailure` (no lease in Redis). */
  readonly local: boolean;
  /**
   * True once the lease can have ended while the permit was held (see {@link PermitLostEvent}):
   * from the moment a whole lease has passed on the bulkhead's clock since the last acquire or
   * renewal that Redis answered was sent, even before a timer noticed (after a pause), and once
   * Redis says it no longer holds it. Never true for a local permit or one released in time.
   */
  readonly lost: boolean;
  /**
   * Aborted when the permit is lost, with a {@link PermitLostError}; made on first read, and
   * then already aborted if the permit is lost. It never aborts for a permit released in time.
   */
  readonly signal: AbortSignal;
  /**
   * Gives the permit back, by one round trip; later calls do nothing. The promise resolves
   * once Redis has it back (or the release failed: the lease then ends it), never rejects;
   * there is no need to await it.
   */
  release(): Promise<void>;
}

/** Emitted when a permit's lease ended while its call still held it. */
export interface PermitLostEvent {
  readonly fencingToken: number;
  /**
   * `'expired'`: Redis no longer held it (its lease ran out before a renewal reached Redis);
   * `'unrenewed'`: no renewal succeeded for a whole lease (this process was paused, or Redis
   * was away), so Redis let it go or soon will.
   */
  readonly reason: 'expired' | 'unrenewed';
  /** ms from the grant to the loss, on the bulkhead's clock. */
  readonly heldFor: number;
}

/** The reason a lost permit's signal aborts with. */
export class PermitLostError extends Error {
  readonly code = 'ERR_BREAKWATER_PERMIT_LOST';
  /** Built by the library, which throws it; not meant to be called by users. */
  constructor(
    readonly bulkheadName: string,
    readonly fencingToken: number,
    readonly reason: PermitLostEvent['reason'],
  ) {
    super(`Bulkhead "${bulkheadName}": the lease of permit ${fencingToken} ended (${reason})`);
  }
}

Object.defineProperty(PermitLostError.prototype, 'name', {
  value: 'PermitLostError',
  writable: true,
});

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

/** Who waits for a permit: told once that it got one or that it never will. */
interface Waiter {
  live(): boolean;
  admitted(permit: Permit): void;
  rejected(error: Error): void;
}

class Permit implements RedisPermit {
  released = false;
  /** Set once the loss is known (by reading `lost`, a heartbeat or a release reply). */
  lostWith: PermitLostError | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  constructor(
    private readonly owner: RedisBulkhead,
    /** The member in Redis; undefined for a local permit. */
    readonly member: string | undefined,
    readonly fencingToken: number | undefined,
    readonly slot: number | undefined,
    /** When the last acquire or renewal that reached Redis was sent (the lease runs from it). */
    public renewedAt: number,
    readonly grantedAt: number,
  ) {}

  get local(): boolean {
    return this.member === undefined;
  }

  /**
   * Read from the local clock, not only set by the heartbeat: after a pause, code runs before
   * any timer does, and must not read a lease that may have ended as valid.
   */
  get lost(): boolean {
    if (this.lostWith === undefined && !this.released) this.owner.checkLease(this);
    return this.lostWith !== undefined;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.lost) this.controller.abort(this.lostWith);
    }
    return this.controller.signal;
  }

  /** @internal */
  abort(reason: PermitLostError): void {
    this.lostWith = reason;
    this.controller?.abort(reason);
  }

  release(): Promise<void> {
    return new Promise<void>((resolve) => this.owner.releasePermit(this, resolve));
  }
}

/** A place in the line; its deadline is the queue timeout's. */
class Entry implements DeadlineEntry {
  done = false;
  constructor(
    readonly waiter: Waiter,
    readonly deadline: number,
  ) {}
}

/** An `acquire` call: a promise, and the caller's signal. */
class PromiseWaiter implements Waiter {
  private done = false;
  constructor(
    private readonly resolve: (permit: RedisPermit) => void,
    private readonly reject: (error: unknown) => void,
    private readonly abortSignal: AbortSignal | undefined,
  ) {
    abortSignal?.addEventListener('abort', this.onAbort);
  }

  live(): boolean {
    return !this.done;
  }

  admitted(permit: Permit): void {
    this.end();
    this.resolve(permit);
  }

  rejected(error: Error): void {
    this.end();
    this.reject(error);
  }

  private end(): void {
    this.done = true;
    this.abortSignal?.removeEventListener('abort', this.onAbort);
  }

  private readonly onAbort = (): void => {
    if (!this.done) this.rejected(this.abortSignal!.reason);
  };
}

/** A call through a pipeline waiting at the bulkhead; its permit goes to the pool. */
class StepWaiter implements Waiter {
  constructor(
    private readonly owner: RedisBulkhead,
    private readonly exec: WaitingExecution,
    private readonly step: number,
    private readonly stamp: number,
  ) {}

  live(): boolean {
    return this.exec.queueLive(this.step, this.stamp);
  }

  admitted(permit: Permit): void {
    this.owner.pool(permit);
    this.exec.queueAdmitted(this.step);
  }

  rejected(error: Error): void {
    this.exec.queueRejected(this.step, error);
  }

  /** The executor is told of the wait only after `enqueue` returns: start then. */
  readonly start = (): void => this.owner.arrive(this);
}

/** One acquire of a single permit for a call that found nobody waiting. */
class Ask implements ScriptTarget {
  constructor(
    private readonly owner: RedisBulkhead,
    private readonly waiter: Waiter,
    private readonly sent: number,
    private readonly probe: boolean,
    /** How many frees the bulkhead had heard of when it was sent. */
    private readonly freedSeen: number,
  ) {}

  replied(reply: unknown): void {
    this.owner.asked(this.waiter, this.sent, this.probe, reply, this.freedSeen);
  }

  failed(error: unknown): void {
    this.owner.askFailed(this.waiter, this.sent, this.probe, error);
  }

  late(reply: unknown): void {
    this.owner.lateGrant(reply);
  }
}

/** One acquire for the calls waiting in line. */
class Pump implements ScriptTarget {
  constructor(
    private readonly owner: RedisBulkhead,
    private readonly sent: number,
    private readonly probe: boolean,
  ) {}

  replied(reply: unknown): void {
    this.owner.pumped(this.sent, this.probe, reply);
  }

  failed(error: unknown): void {
    this.owner.pumpFailed(this.sent, this.probe, error);
  }

  late(reply: unknown): void {
    this.owner.lateGrant(reply);
  }
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
  private readonly channelPrefix: string;
  private readonly o: ResolvedRedisBulkheadOptions;
  private readonly runner: ScriptRunner;
  private readonly acquireScript = new Script(BULKHEAD_ACQUIRE_SCRIPT, BULKHEAD_ACQUIRE_SCRIPT_SHA);
  private readonly renewScript = new Script(BULKHEAD_RENEW_SCRIPT, BULKHEAD_RENEW_SCRIPT_SHA);
  private readonly releaseScript = new Script(BULKHEAD_RELEASE_SCRIPT, BULKHEAD_RELEASE_SCRIPT_SHA);
  private readonly acquireKeys: readonly string[];
  private readonly renewKeys: readonly string[];
  private readonly releaseKeys: readonly string[];
  private readonly leaseArg: string;
  private readonly ttlArg: string;
  private readonly limitArg: string;
  /** Arguments of an acquire of one permit whose call waits if refused, and of one that does not. */
  private readonly oneArgs: readonly string[];
  private readonly oneArgsNoWait: readonly string[];
  private readonly subscriberOption: unknown;
  private readonly client: unknown;
  private subscriber: Subscriber | undefined = undefined;
  private subscribed = false;
  /** Redis permits held and renewed (not released, not lost). */
  private readonly held = new Set<Permit>();
  /** Permits not yet released (lost ones included): what the local share counts. */
  private running = 0;
  /** Permits of pipeline calls: any one is given back when such a call ends. */
  private readonly pooled: Permit[] = [];
  private line: Entry[] = [];
  private head = 0;
  private readonly queueTimes: DeadlineFifo<Entry>;
  private pumping = false;
  /** Frees heard of (pub/sub messages and this process's releases). */
  private freedSeen = 0;
  /** Acquires of single calls on their way: a wake-up meanwhile is theirs, heard on reply. */
  private asking = 0;
  /** A permit may have been freed while a pump was on its way: pump again after it. */
  private dirty = false;
  private pollTimer: TimerHandle | undefined = undefined;
  private pollAt = Number.POSITIVE_INFINITY;
  private heartbeat: TimerHandle | undefined = undefined;
  private renewing = false;
  private available = true;
  private probing = false;
  private nextProbe = 0;
  private live = 0;
  private stamp = 0;
  private disposed = false;
  private nAdmitted = 0;
  private nFull = 0;
  private nTimeout = 0;
  private nRoundTrips = 0;
  private nFallback = 0;
  private nLost = 0;
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
    this.channelPrefix = `${base}freed:`;
    this.channel = `${this.channelPrefix}${o.instanceId}`;
    this.acquireKeys = [this.keys.permits, this.keys.fence, this.keys.instances, this.keys.waiting];
    this.renewKeys = [this.keys.permits, this.keys.instances];
    this.releaseKeys = [this.keys.permits, this.keys.instances, this.keys.waiting];
    this.leaseArg = String(Math.ceil(o.lease));
    this.ttlArg = String(Math.ceil(2 * o.lease));
    this.limitArg = String(o.maxConcurrent);
    this.oneArgs = this.acquireArgs(1, true);
    this.oneArgsNoWait = this.acquireArgs(1, false);
    this.runner = new ScriptRunner(o.adapter, o.clock, o.name, o.timeout);
    this.queueTimes = new DeadlineFifo(o.clock, this.expire);
    this.subscriberOption = options.subscriber;
    this.client = options.client;
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
    return this.running;
  }

  /** Calls of this process waiting for a permit now. */
  get queueLength(): number {
    let n = 0;
    for (let i = this.head; i < this.line.length; i++) {
      const e = this.line[i]!;
      if (!e.done && e.waiter.live()) n++;
    }
    return n;
  }

  /** False from a failed script call until Redis answers again. */
  get storeAvailable(): boolean {
    return this.available;
  }

  /**
   * Permits this process may hold while Redis is away, with `onStoreFailure: 'local'`:
   * `floor(maxConcurrent / instances)`, 0 when processes outnumber the limit (so the shares
   * never sum above it), and 1 before any instance count is known.
   */
  get localShare(): number {
    const n = this.o.instances ?? this.live;
    return n === 0 ? 1 : Math.floor(this.o.maxConcurrent / n);
  }

  /** Counters since the bulkhead was built, and what it holds now. */
  stats(): RedisBulkheadStats {
    return {
      inFlight: this.running,
      queueLength: this.queueLength,
      maxConcurrent: this.o.maxConcurrent,
      admitted: this.nAdmitted,
      rejectionsByReason: { full: this.nFull, queueTimeout: this.nTimeout },
      roundTrips: this.nRoundTrips,
      fallbackAdmissions: this.nFallback,
      permitsLost: this.nLost,
      liveInstances: this.live,
      localShare: this.localShare,
      storeAvailable: this.available,
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
      this.arrive(new PromiseWaiter(resolve, reject, signal));
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
      this.releasePermit(permit as Permit);
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
    for (let w = this.takeWaiter(); w !== undefined; w = this.takeWaiter()) w.rejected(error);
    this.line = [];
    this.head = 0;
    this.queueTimes.drain();
    this.cancelPoll();
    if (this.heartbeat !== undefined) this.clock.clearTimer(this.heartbeat);
    this.heartbeat = undefined;
    if (this.subscriber !== undefined) {
      if (this.subscribed) {
        Promise.resolve(this.subscriber.adapter.unsubscribe(this.channel, this.onFreed)).catch(
          () => {},
        );
      }
      this.subscriber.close();
    }
    this.rejected.clear();
    this.stateChanged.clear();
    this.permitLost.clear();
  }

  // ---- the gate protocol ----------------------------------------------------------------------

  /** Gate protocol ({@link Gate.needs}): called by a pipeline's executor, not by users. */
  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, mayWait: true, callSlot: true };
  }

  /**
   * Asks to wait for the round trip; while Redis is away (and no probe is due),
   * decides at once by `onStoreFailure`.
   */
  admit(): number {
    if (this.available || this.disposed || this.probeDue()) return WAIT;
    const mode = this.o.onStoreFailure;
    if (mode === 'closed') {
      this.refused('full');
      return REJECTED;
    }
    if (mode === 'open' || this.running < this.localShare) {
      this.nAdmitted++;
      this.pool(this.localPermit());
      return 0;
    }
    if (this.hasRoom()) return WAIT;
    this.refused('full');
    return REJECTED;
  }

  /** Gate protocol ({@link WaitingGate.enqueue}): called by a pipeline's executor, not by users. */
  enqueue(exec: WaitingExecution, step: number): number {
    const stamp = ++this.stamp;
    queueMicrotask(new StepWaiter(this, exec, step, stamp).start);
    return stamp;
  }

  /** A waiting call gave up: its place is skipped when reached. */
  leave(): void {}

  /** Gives back the permit of a pipeline call (any one of the pool: all are alike). */
  release(): void {
    const permit = this.pooled.pop();
    if (permit !== undefined) this.releasePermit(permit);
  }

  /** Gate protocol ({@link Gate.releaseSuccess}): called by a pipeline's executor, not by users. */
  releaseSuccess(): void {
    this.release();
  }

  /** Gate protocol ({@link Gate.classifyError}): called by a pipeline's executor, not by users. */
  classifyError(): 0 {
    return 0;
  }

  /** Gate protocol ({@link Gate.classifyResult}): called by a pipeline's executor, not by users. */
  classifyResult(): 0 {
    return 0;
  }

  /** Gate protocol ({@link Gate.rejection}): called by a pipeline's executor, not by users. */
  rejection(): BulkheadRejectedError {
    return this.error('full');
  }

  /** @internal */
  pool(permit: Permit): void {
    this.pooled.push(permit);
  }

  // ---- admission --------------------------------------------------------------------------------

  /** @internal A call asks for a permit. */
  arrive(waiter: Waiter): void {
    if (this.disposed) {
      waiter.rejected(new UsageError(`Bulkhead "${this.name}" was disposed`));
      return;
    }
    if (!waiter.live()) return;
    this.startHeartbeat();
    if (this.hasWaiting()) {
      // Calls already wait: this one waits behind them, for the permits their pump asks for.
      if (this.hasRoom()) {
        this.queueUp(waiter);
        if (!this.pumping && this.pollTimer === undefined) this.pump();
      } else {
        this.refuse(waiter, 'full');
      }
      return;
    }
    let probe = false;
    if (!this.available) {
      if (!this.probeDue()) {
        this.decideLocally(waiter);
        return;
      }
      this.probing = probe = true;
    }
    this.nRoundTrips++;
    this.asking++;
    const now = this.clock.now();
    this.runner.call(
      this.acquireScript,
      this.acquireKeys,
      this.hasRoom() ? this.oneArgs : this.oneArgsNoWait,
      new Ask(this, waiter, now, probe, this.freedSeen),
    );
  }

  /** @internal The reply to one call's own acquire. */
  asked(waiter: Waiter, sent: number, probe: boolean, raw: unknown, freedSeen: number): void {
    const reply = acquireReplyOf(raw);
    if (reply === undefined) {
      this.askFailed(waiter, sent, probe, new TypeError(`unexpected reply: ${String(raw)}`));
      return;
    }
    this.asking--;
    this.answered(probe, reply.live);
    if (reply.granted === 1) {
      const permit = this.redisPermit(reply.firstToken, reply.slots[0]!, sent);
      if (waiter.live() && !this.disposed) {
        this.admit1(waiter, permit);
        return;
      }
      this.releasePermit(permit);
    }
    if (!waiter.live()) return;
    if (this.disposed) {
      waiter.rejected(new UsageError(`Bulkhead "${this.name}" was disposed`));
      return;
    }
    if (this.hasRoom()) {
      this.queueUp(waiter);
      if (this.pumping) return;
      // A permit freed after the script ran is heard of before its reply, when nobody waited
      // yet to be woken: ask again at once rather than at the next poll.
      if (this.freedSeen !== freedSeen) this.pump();
      else this.schedulePoll(reply.wait);
    } else {
      this.refuse(waiter, 'full');
    }
  }

  private acquireArgs(want: number, willWait: boolean): string[] {
    const { limitArg, leaseArg, instanceId, ttlArg, channelPrefix } = this;
    const wait = willWait ? '1' : '0';
    return [limitArg, String(want), leaseArg, instanceId, ttlArg, channelPrefix, wait];
  }

  /**
   * A wake-up came with no call waiting here any more: an acquire of nothing leaves the
   * waiting instances and wakes the next ones for the free slots.
   */
  private passOn(): void {
    this.nRoundTrips++;
    this.runner.call(this.acquireScript, this.acquireKeys, this.acquireArgs(0, false), {
      replied: (raw) => {
        const reply = acquireReplyOf(raw);
        if (reply !== undefined) this.answered(false, reply.live);
      },
      failed: (error) => this.storeFailed(false, this.clock.now(), error),
    });
  }

  /** @internal One call's own acquire failed: `onStoreFailure` decides it. */
  askFailed(waiter: Waiter, sent: number, probe: boolean, error: unknown): void {
    this.asking--;
    this.storeFailed(probe, sent, error);
    if (!waiter.live()) return;
    if (this.disposed) waiter.rejected(new UsageError(`Bulkhead "${this.name}" was disposed`));
    else this.decideLocally(waiter);
  }

  /** @internal A reply after its deadline that granted permits nobody took: give them back. */
  lateGrant(raw: unknown): void {
    const reply = acquireReplyOf(raw);
    if (reply === undefined || reply.granted === 0) return;
    const members: string[] = [];
    for (let i = 0; i < reply.granted; i++) {
      members.push(this.member(reply.firstToken + i, reply.slots[i]!));
    }
    this.sendRelease(members, undefined);
  }

  /** Asks Redis for permits for the calls in line (as many as wait, one round trip). */
  private pump(): void {
    if (this.pumping || this.disposed) return;
    const want = Math.min(this.countWaiting(), this.o.maxConcurrent);
    if (want === 0) {
      this.cancelPoll();
      return;
    }
    let probe = false;
    if (!this.available) {
      if (!this.probeDue()) {
        this.serveLocally();
        if (this.hasWaiting()) this.schedulePollIn(this.nextProbe - this.clock.now());
        return;
      }
      this.probing = probe = true;
    }
    this.cancelPoll();
    this.pumping = true;
    this.dirty = false;
    this.nRoundTrips++;
    const args = want === 1 ? this.oneArgs : this.acquireArgs(want, true);
    this.runner.call(
      this.acquireScript,
      this.acquireKeys,
      args,
      new Pump(this, this.clock.now(), probe),
    );
  }

  /** @internal The reply to a pump. */
  pumped(sent: number, probe: boolean, raw: unknown): void {
    const reply: AcquireReply | undefined = acquireReplyOf(raw);
    if (reply === undefined) {
      this.pumpFailed(sent, probe, new TypeError(`unexpected reply: ${String(raw)}`));
      return;
    }
    // Still pumping while it learns that Redis answers: the permits are handed out first.
    this.answered(probe, reply.live);
    this.pumping = false;
    let unused: string[] | undefined;
    for (let i = 0; i < reply.granted; i++) {
      const permit = this.redisPermit(reply.firstToken + i, reply.slots[i]!, sent);
      const waiter = this.takeWaiter();
      if (waiter !== undefined) {
        this.admit1(waiter, permit);
      } else {
        // Its caller left meanwhile.
        this.held.delete(permit);
        permit.released = true;
        this.running--;
        (unused ??= []).push(permit.member!);
      }
    }
    if (unused !== undefined) this.sendRelease(unused, undefined);
    if (!this.hasWaiting() || this.disposed) return;
    if (reply.wait < 0 || this.dirty) this.pump();
    else this.schedulePoll(reply.wait);
  }

  /** @internal A pump failed: the calls in line are served by `onStoreFailure`. */
  pumpFailed(sent: number, probe: boolean, error: unknown): void {
    this.pumping = false;
    this.storeFailed(probe, sent, error);
    if (this.disposed) return;
    this.serveLocally();
    if (this.hasWaiting()) this.schedulePollIn(Math.max(0, this.nextProbe - this.clock.now()));
  }

  /** Decides a call by `onStoreFailure`. */
  private decideLocally(waiter: Waiter): void {
    const mode = this.o.onStoreFailure;
    if (mode === 'open' || (mode === 'local' && this.running < this.localShare)) {
      this.admit1(waiter, this.localPermit());
    } else if (mode === 'local' && this.hasRoom()) {
      this.queueUp(waiter);
      this.schedulePollIn(Math.max(0, this.nextProbe - this.clock.now()));
    } else {
      this.refuse(waiter, 'full');
    }
  }

  /** While Redis is away: admits calls in line within the local share. */
  private serveLocally(): void {
    const mode = this.o.onStoreFailure;
    if (mode === 'closed') {
      for (let w = this.takeWaiter(); w !== undefined; w = this.takeWaiter()) {
        this.refuse(w, 'full');
      }
      return;
    }
    while (mode === 'open' || this.running < this.localShare) {
      const waiter = this.takeWaiter();
      if (waiter === undefined) return;
      this.admit1(waiter, this.localPermit());
    }
  }

  private admit1(waiter: Waiter, permit: Permit): void {
    this.nAdmitted++;
    waiter.admitted(permit);
  }

  private redisPermit(token: number, slot: number, sent: number): Permit {
    const permit = new Permit(this, this.member(token, slot), token, slot, sent, this.clock.now());
    this.held.add(permit);
    this.running++;
    return permit;
  }

  private localPermit(): Permit {
    this.nFallback++;
    this.running++;
    return new Permit(this, undefined, undefined, undefined, 0, this.clock.now());
  }

  private member(token: number, slot: number): string {
    return `${this.instanceId}:${token}:${slot}`;
  }

  /** @internal Gives `permit` back; calls `done` once Redis has it (or failed to take it). */
  releasePermit(permit: Permit, done?: () => void): void {
    if (permit.released) {
      done?.();
      return;
    }
    permit.released = true;
    this.running--;
    this.freedSeen++;
    if (permit.member !== undefined && this.held.delete(permit)) {
      this.sendRelease([permit.member], [permit], done);
    } else {
      done?.();
    }
    // While Redis answers, the release's reply says whether the freed slot is this process's
    // to take (it may be another's turn).
    if (this.disposed || this.available || !this.hasWaiting()) return;
    this.serveLocally();
  }

  /** Freed slots were handed to this process's calls in line: ask for them. */
  private takeHandedSlots(): void {
    if (this.disposed || !this.hasWaiting()) return;
    if (this.pumping) this.dirty = true;
    else this.pump();
  }

  private sendRelease(members: string[], permits: Permit[] | undefined, done?: () => void): void {
    this.nRoundTrips++;
    // Whether calls wait here: the script then keeps this process's place in the line, and the
    // reply says how many freed slots are its turn to ask for.
    const waiting = !this.disposed && this.available && this.hasWaiting() ? '1' : '0';
    const args = [this.channelPrefix, this.instanceId, waiting, ...members];
    this.runner.call(this.releaseScript, this.releaseKeys, args, {
      replied: (raw) => {
        const reply = releaseReplyOf(raw, members.length);
        if (reply !== undefined) {
          this.answered(false, this.live);
          for (let i = 0; i < (permits?.length ?? 0); i++) {
            if (reply.flags[i] === 0) this.lose(permits![i]!, 'expired');
          }
          if (reply.own > 0) this.takeHandedSlots();
        }
        done?.();
      },
      failed: (error) => {
        // The lease ends it in Redis: nothing renews it any more.
        this.storeFailed(false, this.clock.now(), error);
        done?.();
        // The calls in line are served by `onStoreFailure` (or a probe).
        this.takeHandedSlots();
      },
    });
  }

  // ---- the line ---------------------------------------------------------------------------------

  private hasWaiting(): boolean {
    this.pruneHead();
    return this.head < this.line.length;
  }

  private countWaiting(): number {
    this.pruneHead();
    return this.queueLength;
  }

  private hasRoom(): boolean {
    return this.o.maxQueue > 0 && this.countWaiting() < this.o.maxQueue;
  }

  private queueUp(waiter: Waiter): void {
    const timed = this.o.queueTimeout !== Number.POSITIVE_INFINITY;
    const entry = new Entry(
      waiter,
      timed ? this.clock.now() + this.o.queueTimeout : Number.POSITIVE_INFINITY,
    );
    this.line.push(entry);
    if (timed) this.queueTimes.add(entry);
    this.subscribe();
  }

  /** The first live waiter, out of the line; undefined when none. */
  private takeWaiter(): Waiter | undefined {
    const line = this.line;
    while (this.head < line.length) {
      const e = line[this.head]!;
      line[this.head++] = undefined as unknown as Entry;
      if (e.done) continue;
      this.settle(e);
      if (e.waiter.live()) {
        this.compact();
        return e.waiter;
      }
    }
    this.line = [];
    this.head = 0;
    return undefined;
  }

  private pruneHead(): void {
    const line = this.line;
    while (this.head < line.length) {
      const e = line[this.head]!;
      if (!e.done && e.waiter.live()) break;
      this.settle(e);
      line[this.head++] = undefined as unknown as Entry;
    }
    if (this.head === line.length) {
      this.line = [];
      this.head = 0;
    }
  }

  private settle(e: Entry): void {
    if (e.done) return;
    if (e.deadline !== Number.POSITIVE_INFINITY) this.queueTimes.settle(e);
    else e.done = true;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.line.length) {
      this.line = this.line.slice(this.head);
      this.head = 0;
    }
  }

  private readonly expire = (entry: Entry): void => {
    if (entry.waiter.live()) this.refuse(entry.waiter, 'queue-timeout');
  };

  // ---- waking -----------------------------------------------------------------------------------

  private subscribe(): void {
    if (this.subscribed || this.disposed) return;
    this.subscribed = true;
    this.subscriber ??= makeSubscriber(this.subscriberOption, this.client);
    if (this.subscriber === undefined) return;
    // Meanwhile the poll wakes the waiting calls; the next call to wait tries again.
    Promise.resolve(this.subscriber.adapter.subscribe(this.channel, this.onFreed)).catch(() => {
      this.subscribed = false;
    });
  }

  /** A permit was freed somewhere and handed to this process's turn (pub/sub). */
  private readonly onFreed = (): void => {
    this.freedSeen++;
    if (this.disposed || !this.available) return;
    if (this.pumping) this.dirty = true;
    else if (this.hasWaiting()) this.pump();
    else if (this.asking === 0) this.passOn();
  };

  /** Polls in a jittered `pollInterval`, or when the earliest lease ends (`leaseEnd` ms), if sooner. */
  private schedulePoll(leaseEnd: number): void {
    let delay = this.o.pollInterval * (0.5 + this.o.random());
    if (leaseEnd >= 0 && leaseEnd + 1 < delay) delay = leaseEnd + 1;
    this.schedulePollIn(delay);
  }

  private schedulePollIn(delay: number): void {
    const at = this.clock.now() + delay;
    if (this.pollTimer !== undefined) {
      if (this.pollAt <= at) return;
      this.clock.clearTimer(this.pollTimer);
    }
    this.pollAt = at;
    // Calls wait for it: it keeps the process alive.
    this.pollTimer = this.clock.setTimer(this.poll, delay, true);
  }

  private cancelPoll(): void {
    if (this.pollTimer === undefined) return;
    this.clock.clearTimer(this.pollTimer);
    this.pollTimer = undefined;
    this.pollAt = Number.POSITIVE_INFINITY;
  }

  private readonly poll = (): void => {
    this.pollTimer = undefined;
    this.pollAt = Number.POSITIVE_INFINITY;
    this.pump();
  };

  // ---- leases -----------------------------------------------------------------------------------

  /** On first use: loads the scripts and starts renewing. */
  private startHeartbeat(): void {
    if (this.heartbeat !== undefined || this.disposed) return;
    this.runner.preload([this.acquireScript, this.releaseScript, this.renewScript]);
    this.heartbeat = this.clock.setTimer(this.beat, this.o.lease / 3, false);
  }

  /**
   * Every third of the lease: permits not renewed for a whole lease are lost; the rest are
   * renewed, and the instance counted live, in one script call.
   */
  private readonly beat = (): void => {
    this.heartbeat = this.clock.setTimer(this.beat, this.o.lease / 3, false);
    const now = this.clock.now();
    for (const permit of this.held) this.checkLease(permit);
    if (this.renewing) return;
    this.renewing = true;
    const permits = [...this.held];
    const args = [this.leaseArg, this.instanceId, this.ttlArg];
    for (const p of permits) args.push(p.member!);
    this.nRoundTrips++;
    this.runner.call(this.renewScript, this.renewKeys, args, {
      replied: (raw) => {
        this.renewing = false;
        const reply = renewReplyOf(raw);
        if (reply === undefined) {
          this.storeFailed(false, now, new TypeError(`unexpected reply: ${String(raw)}`));
          return;
        }
        this.answered(false, reply.live);
        const lost = reply.lost.length === 0 ? undefined : new Set(reply.lost);
        for (const p of permits) {
          if (p.released || p.lostWith !== undefined) continue;
          if (lost?.has(p.member!)) this.lose(p, 'expired');
          else p.renewedAt = now;
        }
      },
      failed: (error) => {
        this.renewing = false;
        this.storeFailed(false, now, error);
      },
    });
  };

  /**
   * @internal Loses `permit` once a whole lease has passed since its last acquire or renewal
   * that reached Redis was sent: Redis started the lease no earlier than that.
   */
  checkLease(permit: Permit): void {
    if (permit.member !== undefined && this.clock.now() - permit.renewedAt >= this.o.lease) {
      this.lose(permit, 'unrenewed');
    }
  }

  private lose(permit: Permit, reason: PermitLostEvent['reason']): void {
    if (permit.lostWith !== undefined) return;
    this.held.delete(permit);
    this.nLost++;
    const token = permit.fencingToken!;
    permit.abort(new PermitLostError(this.name, token, reason));
    if (this.permitLost.size !== 0) {
      this.permitLost.emit({
        fencingToken: token,
        reason,
        heldFor: this.clock.now() - permit.grantedAt,
      });
    }
  }

  // ---- the store's health -----------------------------------------------------------------------

  private probeDue(): boolean {
    return !this.probing && this.clock.now() >= this.nextProbe;
  }

  private answered(probe: boolean, live: number): void {
    if (probe) this.probing = false;
    this.live = live;
    if (this.available) return;
    this.available = true;
    if (this.stateChanged.size !== 0) this.stateChanged.emit({ available: true });
    if (!this.pumping && this.hasWaiting()) this.pump();
  }

  private storeFailed(probe: boolean, sent: number, error: unknown): void {
    if (probe) {
      this.probing = false;
      this.nextProbe = sent + this.o.probeInterval;
    }
    if (!this.available || this.disposed) return;
    this.available = false;
    this.nextProbe = this.clock.now() + this.o.probeInterval;
    if (this.stateChanged.size !== 0) this.stateChanged.emit({ available: false, error });
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
      this.rejected.emit({ reason, inFlight: this.running, queued: this.queueLength });
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
