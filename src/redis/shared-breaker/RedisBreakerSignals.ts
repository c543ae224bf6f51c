import type { Clock, TimerHandle } from '../../clock/Clock.js';
import { UsageError } from '../../errors/OptionsError.js';
import { type Disposer, Listeners } from '../../events/Listeners.js';
import type { CircuitBreaker } from '../../policies/circuit-breaker/CircuitBreaker.js';
import type { StateChangeEvent } from '../../policies/circuit-breaker/events.js';
import {
  breakEndOf,
  holdOpen,
  isHalfOpen,
  probeGateOf,
  setProbeGate,
} from '../../policies/circuit-breaker/shared.js';
import { brand } from '../../protocol/brand.js';
import type { StoreStateEvent } from '../RedisRateLimiter.js';
import {
  type ResolvedSignalsOptions,
  resolveSignalsOptions,
  type SharedSignalsOptions,
} from './options.js';
import { type Subscription, subscribe } from './pubsub.js';
import { ScriptRunner } from './runner.js';
import { LEASE, OUTCOME, REPORT, SYNC, WITHDRAW } from './shas.js';

/** Counters and the shared state as one instance knows it. */
export interface SharedSignalsStats {
  /** True while this instance knows of a shared open (a quorum reported open). */
  readonly sharedOpen: boolean;
  /** ms the shared open lasts from now, as this instance knows it (0 when none). */
  readonly sharedOpenRemaining: number;
  /** False from a failed Redis operation until one succeeds: the breaker decides alone. */
  readonly storeAvailable: boolean;
  /** Times this instance reported its breaker open. */
  readonly reports: number;
  /** Times the shared state held this instance's breaker open (closed or half-open before). */
  readonly heldOpen: number;
  /** Probe leases this instance was granted. */
  readonly leasesGranted: number;
  /** Lease requests refused: another instance held the lease, or the shared state was open. */
  readonly leasesRefused: number;
  /** Probe outcomes Redis accepted from this instance. */
  readonly outcomes: number;
  /** Probe outcomes Redis ignored: their lease had run out (stale). */
  readonly staleOutcomes: number;
  /** Messages received by pub/sub. */
  readonly messages: number;
  /** Scripts sent to Redis (reports, leases, outcomes, polls). */
  readonly roundTrips: number;
  /** Redis operations that failed or passed their deadline. */
  readonly storeFailures: number;
}

/** The `length` numbers a script replied, or the error that fails any other reply. */
function numbersOf(reply: unknown, length: number, script: string): number[] | TypeError {
  if (Array.isArray(reply) && reply.length === length) {
    const out = reply.map(Number);
    if (out.every(Number.isFinite)) return out;
  }
  return new TypeError(`unexpected reply to the ${script} script: ${String(reply)}`);
}

/**
 * Shared signals for a local circuit breaker, through Redis: the breaker keeps deciding every
 * call alone (no Redis on any call's path); the signals only change its state.
 *
 * - When the breaker opens, one script reports it under this instance's identity (a sorted
 *   set of reports, each expiring after the break by Redis `TIME`, or sooner when its instance
 *   stops heartbeating; see {@link SharedSignalsOptions.instance} for the identity that keeps a
 *   restarted instance from counting twice). When the reports alive reach the quorum, the shared
 *   state opens for the break, published by pub/sub and read by a poll every `pollInterval`
 *   (pub/sub loses messages across reconnects): every instance's breaker is held open until
 *   it ends (transition reason `shared-open`). A quorum of 2 or more keeps one instance with
 *   a bad network path from opening all the others.
 * - Half-open probes are leased cluster-wide: a half-open breaker admits a probe only while
 *   this instance holds the lease (with a fencing token); the others refuse meanwhile. The
 *   holder's outcome is published: a success lets the other instances probe for themselves,
 *   a failure holds the half-open ones open for another break. An outcome whose lease ran
 *   out is ignored.
 * - Shared state only ever refuses more: it never admits a call the local breaker would
 *   refuse, and disabled, metrics-only and forced-open breakers are left alone.
 * - When Redis is down or slow, the breaker behaves exactly as a local one: every operation
 *   has its own deadline (`timeout`), the first failure marks the store unavailable (an event
 *   and a counter, not a health failure) and the breaker probes for itself; the next operation
 *   that succeeds (the poll) re-syncs: a break that could not be reported is reported then.
 *
 * One breaker takes one set of signals; `dispose()` detaches them.
 *
 * @example
 * ```ts
 * const breaker = new CircuitBreaker({ name: 'payments', breakDuration: 10_000 });
 * const signals = sharedSignals(breaker, { client, quorum: 3 });
 * await pipeline(breaker).execute(() => pay());   // no Redis here
 * ```
 */
export class RedisBreakerSignals {
  /** The breaker the signals drive. */
  readonly breaker: CircuitBreaker;
  /** The name the instances share (the hash tag of the keys). */
  readonly name: string;
  /**
   * This instance's identity in the shared state (see {@link SharedSignalsOptions.instance}):
   * its reports and heartbeats. Its probe leases are held under a per-process id.
   */
  readonly instance: string;
  /** The Redis keys: reports, live, joined, state, probe, fence; and the pub/sub channel. */
  readonly keys: Readonly<{
    reports: string;
    live: string;
    joined: string;
    state: string;
    probe: string;
    fence: string;
    channel: string;
  }>;
  private readonly o: ResolvedSignalsOptions;
  /** The breaker's clock: shared durations become times of it. */
  private readonly clock: Clock;
  /** The clock of deadlines and polls. */
  private readonly timers: Clock;
  private readonly runner: ScriptRunner;
  private readonly reportKeys: readonly string[];
  private readonly leaseKeys: readonly string[];
  private readonly outcomeKeys: readonly string[];
  private readonly syncKeys: readonly string[];
  private readonly quorumArg: string;
  private readonly shareArg: string;
  private readonly leaseArgs: readonly string[];
  private readonly syncArgs: readonly string[];
  /** How long a heartbeat lasts; '1' when the identity may be new after a restart. */
  private readonly beatArgs: readonly [string, string];
  private readonly offTransitions: Disposer;
  private subscription: Subscription | undefined;
  private subscribing = false;
  private pollTimer: TimerHandle | undefined;
  private polling = false;
  private disposed = false;
  private available = true;
  /** End of the shared open this instance knows of, on its clock. */
  private sharedUntil = Number.NEGATIVE_INFINITY;
  /** A lease request is on its way. */
  private asking = false;
  private leaseToken = 0;
  /** The half-open generation the lease was granted for. */
  private leaseGen = -1;
  private leaseUntil = 0;
  /** Another instance holds the lease until then, as far as this one knows. */
  private heldElsewhereUntil = 0;
  /** A leased probe succeeded elsewhere: this instance probes for itself until it opens again. */
  private released = false;
  /** The breaker opened while Redis was away: report it when Redis answers again. */
  private unreported = false;
  private nReports = 0;
  private nHeldOpen = 0;
  private nGranted = 0;
  private nRefused = 0;
  private nOutcomes = 0;
  private nStale = 0;
  private nMessages = 0;
  private nRoundTrips = 0;
  private nFailures = 0;
  /** @internal */ readonly storeStateChanged = new Listeners<StoreStateEvent>();

  constructor(breaker: CircuitBreaker, options: SharedSignalsOptions) {
    const o = resolveSignalsOptions(options, breaker.name, breaker.clock);
    if (probeGateOf(breaker) !== undefined) {
      throw new UsageError(`Circuit breaker "${breaker.name}" already has shared signals`);
    }
    this.o = o;
    this.breaker = breaker;
    this.name = o.name;
    this.instance = o.instance;
    this.clock = breaker.clock;
    this.timers = o.clock;
    const start = `${o.prefix}breaker:{${o.name}}:`;
    this.keys = Object.freeze({
      reports: `${start}reports`,
      live: `${start}live`,
      joined: `${start}joined`,
      state: `${start}state`,
      probe: `${start}probe`,
      fence: `${start}fence`,
      channel: `${start}events`,
    });
    const k = this.keys;
    this.reportKeys = [k.reports, k.live, k.state, k.joined];
    this.leaseKeys = [k.probe, k.fence, k.state];
    this.outcomeKeys = [k.probe, k.reports, k.live, k.state, k.joined];
    this.syncKeys = [k.live, k.state, k.probe, k.joined, k.reports];
    this.quorumArg = String(o.quorum);
    this.shareArg = Number.isNaN(o.share) ? '' : String(o.share);
    // The fence outlives any lease by far; tokens go on increasing after it expires anyway.
    this.leaseArgs = [
      o.holder,
      String(o.probeLease),
      String(Math.max(86_400_000, o.probeLease * 10)),
    ];
    // Live for three polls, each of which may take its whole deadline.
    this.beatArgs = [
      String(3 * (o.pollInterval + o.timeout)),
      o.instanceSurvivesRestart ? '0' : '1',
    ];
    this.syncArgs = [o.instance, ...this.beatArgs];
    this.runner = new ScriptRunner(o.adapter, o.name, o.timeout, o.clock);
    for (const warning of o.adapter.warnings?.() ?? []) o.onWarning(warning);
    setProbeGate(breaker, this);
    this.offTransitions = breaker.onStateChange(this.onTransition);
    if (o.subscriber !== false) this.subscribe();
    this.poll();
  }

  /** False from a failed Redis operation until one succeeds; the breaker decides alone meanwhile. */
  get storeAvailable(): boolean {
    return this.available;
  }

  /** True while this instance knows of a shared open. */
  get sharedOpen(): boolean {
    return this.clock.now() < this.sharedUntil;
  }

  /** Counters since the signals were made, and the shared state as this instance knows it. */
  stats(): SharedSignalsStats {
    const remaining = Math.max(0, this.sharedUntil - this.clock.now());
    return {
      sharedOpen: remaining > 0,
      sharedOpenRemaining: remaining,
      storeAvailable: this.available,
      reports: this.nReports,
      heldOpen: this.nHeldOpen,
      leasesGranted: this.nGranted,
      leasesRefused: this.nRefused,
      outcomes: this.nOutcomes,
      staleOutcomes: this.nStale,
      messages: this.nMessages,
      roundTrips: this.nRoundTrips,
      storeFailures: this.nFailures,
    };
  }

  /** Calls `listener` when Redis stops or starts answering the signals' operations. */
  onStoreStateChange(listener: (event: StoreStateEvent) => void): Disposer {
    return this.storeStateChanged.add(listener);
  }

  /**
   * Reads the shared state now, as the poll does, and says this instance is alive. Resolves
   * when applied; never rejects (a failure marks the store unavailable).
   */
  sync(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.nRoundTrips++;
    return this.runner.run(SYNC, this.syncKeys, this.syncArgs).then(
      (reply) => {
        const r = numbersOf(reply, 2, 'sync');
        if (r instanceof TypeError) return this.failed(r);
        this.answered();
        const now = this.clock.now();
        if (r[0]! > 0) this.applyOpen(r[0]!, false);
        if (this.leaseToken === 0 || this.leaseGen !== this.breaker.generation) {
          this.heldElsewhereUntil = r[1]! > 0 ? now + r[1]! : 0;
        }
      },
      (error: unknown) => this.failed(error),
    );
  }

  /**
   * Detaches the signals: the breaker is a local one again (as it is now), the poll stops,
   * the subscription ends (and its connection, when the signals made it). A probe lease held
   * is given back. The client is left as it is.
   */
  dispose(): void {
    if (this.disposed) return;
    if (this.leaseToken !== 0) this.sendOutcome('release', 0);
    this.disposed = true;
    if (probeGateOf(this.breaker) === this) setProbeGate(this.breaker, undefined);
    this.offTransitions();
    if (this.pollTimer !== undefined) this.timers.clearTimer(this.pollTimer);
    this.pollTimer = undefined;
    this.subscription?.close();
    this.subscription = undefined;
    this.storeStateChanged.clear();
  }

  // ---- the probe gate -------------------------------------------------------------------------

  /** @internal Asked by the half-open breaker before each probe it has room for. */
  mayProbe(now: number): boolean {
    if (!this.available || this.disposed) return true;
    const gen = this.breaker.generation;
    if (this.leaseToken !== 0 && this.leaseGen === gen) {
      if (now < this.leaseUntil) return true;
      // Ran out: a probe admitted now could overlap the next holder's.
      this.leaseToken = 0;
    }
    if (this.released) return true;
    if (this.asking || now < this.heldElsewhereUntil) return false;
    this.askLease(gen, now);
    return false;
  }

  private askLease(gen: number, sent: number): void {
    this.asking = true;
    this.nRoundTrips++;
    this.runner.run(LEASE, this.leaseKeys, this.leaseArgs).then(
      (reply) => {
        this.asking = false;
        const r = numbersOf(reply, 4, 'lease');
        if (r instanceof TypeError) return this.failed(r);
        this.answered();
        const [granted, token, ms, sharedOpen] = r as [number, number, number, number];
        if (sharedOpen === 1) {
          this.nRefused++;
          this.applyOpen(ms, false);
          return;
        }
        if (granted !== 1) {
          this.nRefused++;
          this.heldElsewhereUntil = this.clock.now() + ms;
          return;
        }
        this.nGranted++;
        this.leaseToken = token;
        this.leaseGen = gen;
        // From the send: the lease began no earlier in Redis, so it ends here first.
        this.leaseUntil = sent + ms;
        if (this.disposed || this.breaker.generation !== gen || !isHalfOpen(this.breaker)) {
          this.sendOutcome('release', 0);
        }
      },
      (error: unknown) => {
        this.asking = false;
        this.failed(error);
      },
    );
  }

  // ---- transitions of the breaker -----------------------------------------------------------

  private readonly onTransition = (e: StateChangeEvent): void => {
    if (e.to === 'open') this.released = false;
    const held = this.leaseToken !== 0 && this.leaseGen === e.generation - 1;
    if (e.reason === 'shared-open') {
      if (held) this.sendOutcome('release', 0);
      return;
    }
    if (e.to === 'open') {
      if (held) this.sendOutcome('failed', e.breakDuration);
      else this.report(e.breakDuration);
    } else if (e.to === 'closed' && (e.from === 'half-open' || e.from === 'open')) {
      if (held) this.sendOutcome(e.reason === 'probes-succeeded' ? 'ok' : 'release', 0);
      else this.withdraw();
    } else if (held) {
      this.sendOutcome('release', 0);
    }
  };

  private report(breakMs: number): void {
    if (this.disposed || !(breakMs >= 1)) return;
    this.nRoundTrips++;
    const ms = String(Math.ceil(breakMs));
    this.runner
      .run(REPORT, this.reportKeys, [
        this.instance,
        ms,
        this.quorumArg,
        this.shareArg,
        this.keys.channel,
        ...this.beatArgs,
      ])
      .then(
        (reply) => {
          const r = numbersOf(reply, 4, 'report');
          if (r instanceof TypeError) return this.failed(r);
          this.nReports++;
          this.unreported = false;
          this.answered();
          if (r[3]! > 0) this.applyOpen(r[3]!, false);
        },
        (error: unknown) => {
          this.unreported = true;
          this.failed(error);
        },
      );
  }

  private withdraw(): void {
    if (this.disposed) return;
    this.unreported = false;
    this.nRoundTrips++;
    this.runner.run(WITHDRAW, [this.keys.reports], [this.instance]).then(
      () => this.answered(),
      (error: unknown) => this.failed(error),
    );
  }

  private sendOutcome(outcome: 'ok' | 'failed' | 'release', breakMs: number): void {
    const token = this.leaseToken;
    this.leaseToken = 0;
    if (this.disposed) return;
    this.nRoundTrips++;
    this.runner
      .run(OUTCOME, this.outcomeKeys, [
        this.o.holder,
        String(token),
        outcome,
        String(Math.max(1, Math.ceil(breakMs))),
        this.quorumArg,
        this.shareArg,
        this.keys.channel,
        this.instance,
        ...this.beatArgs,
      ])
      .then(
        (reply) => {
          const r = numbersOf(reply, 2, 'outcome');
          if (r instanceof TypeError) return this.failed(r);
          this.answered();
          if (r[0] === 1) {
            this.nOutcomes++;
            if (outcome === 'failed') this.nReports++;
            if (r[1]! > 0) this.applyOpen(r[1]!, false);
          } else {
            this.nStale++;
            // The lease ran out first: a failure is still this instance's break to report.
            if (outcome === 'failed') this.report(breakMs);
          }
        },
        (error: unknown) => {
          if (outcome === 'failed') this.unreported = true;
          this.failed(error);
        },
      );
  }

  // ---- the shared state ---------------------------------------------------------------------

  /**
   * A shared open for `ms` from now: the breaker is held open until then. With `onlyIfBroken`
   * (a probe failed elsewhere), only a breaker that is open or half-open already.
   */
  private applyOpen(ms: number, onlyIfBroken: boolean): void {
    if (this.disposed) return;
    const b = this.breaker;
    const until = this.clock.now() + ms;
    if (!onlyIfBroken && until > this.sharedUntil) this.sharedUntil = until;
    if (onlyIfBroken) {
      // Reading the state applies the transitions due first.
      const state = b.state;
      if (state !== 'open' && state !== 'half-open') return;
    }
    if (holdOpen(b, until)) this.nHeldOpen++;
  }

  private readonly onMessage = (text: string): void => {
    if (this.disposed) return;
    this.nMessages++;
    const space = text.indexOf(' ');
    const kind = space < 0 ? text : text.slice(0, space);
    const arg = Number(text.slice(space + 1));
    if (kind === 'open' && arg > 0) {
      this.applyOpen(arg, false);
    } else if (kind === 'reopen' && arg > 0) {
      this.applyOpen(arg, true);
    } else if (kind === 'closed') {
      this.released = true;
      this.heldElsewhereUntil = 0;
    }
  };

  // ---- the store's health and the poll -------------------------------------------------------

  private answered(): void {
    if (this.available) return;
    this.available = true;
    if (this.storeStateChanged.size !== 0) this.storeStateChanged.emit({ available: true });
    this.resync();
  }

  private failed(error: unknown): void {
    this.nFailures++;
    if (!this.available || this.disposed) return;
    this.available = false;
    if (this.storeStateChanged.size !== 0) {
      this.storeStateChanged.emit({ available: false, error });
    }
  }

  /** Redis answers again: what it missed meanwhile. */
  private resync(): void {
    if (this.subscription === undefined && this.o.subscriber !== false) this.subscribe();
    const b = this.breaker;
    if (this.unreported && b.state === 'open') {
      this.report(breakEndOf(b) - this.clock.now());
    }
    this.unreported = false;
  }

  private poll = (): void => {
    this.pollTimer = undefined;
    if (this.disposed || this.polling) return;
    this.polling = true;
    this.sync().then(() => {
      this.polling = false;
      if (!this.disposed) {
        this.pollTimer = this.timers.setTimer(this.poll, this.o.pollInterval, false);
      }
    });
  };

  private subscribe(): void {
    if (this.subscribing) return;
    this.subscribing = true;
    const owned = this.o.subscriber === undefined;
    const client = owned ? this.o.client : (this.o.subscriber as never);
    this.subscription = subscribe(client, owned, this.keys.channel, {
      message: this.onMessage,
      // Messages sent while the connection was away are lost: read the state now.
      ready: () => {
        if (!this.disposed) void this.sync();
      },
      broken: () => {
        this.subscription?.close();
        this.subscription = undefined;
        this.subscribing = false;
      },
    });
    if (this.subscription === undefined) this.subscribing = false;
  }
}

brand(RedisBreakerSignals, 'RedisBreakerSignals');

/**
 * Attaches shared signals through Redis to `breaker` (see {@link RedisBreakerSignals}): the
 * breaker keeps deciding every call alone, and is held open when a quorum of instances has
 * reported open; its half-open probes are leased cluster-wide. Throws OptionsError for bad
 * options, UsageError when the breaker already has signals.
 */
export function sharedSignals(
  breaker: CircuitBreaker,
  options: SharedSignalsOptions,
): RedisBreakerSignals {
  return new RedisBreakerSignals(breaker, options);
}
