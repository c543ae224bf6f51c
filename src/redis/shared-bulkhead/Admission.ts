/**
 * How a call of a Redis bulkhead's process gets its permit: its own acquire when nobody waits
 * here, else a place in the line and one acquire (a pump) for all the calls in it, woken by a
 * freed permit or a poll; while Redis is away, an answer by `onStoreFailure`. And how a permit
 * given back frees a slot for the line. Apart from the bulkhead's public surface and gate
 * protocol (RedisBulkhead.ts), which hand it their calls.
 */
import type { Clock } from '../../clock/Clock.js';
import { UsageError } from '../../errors/OptionsError.js';
import type { Listeners } from '../../events/Listeners.js';
import type { BulkheadRejection } from '../../policies/bulkhead/errors.js';
import { Leases } from './Leases.js';
import type { ResolvedRedisBulkheadOptions } from './options.js';
import type { Permit, PermitLostEvent, PermitOwner } from './permit.js';
import { type AcquireReply, acquireReplyOf, releaseReplyOf } from './replies.js';
import type { ScriptCalls } from './ScriptCalls.js';
import type { ScriptTarget } from './ScriptRunner.js';
import type { StoreHealth } from './StoreHealth.js';
import type { Waiter, WaitLine } from './WaitLine.js';
import { Wakeups } from './Wakeups.js';

/** @internal Refuses `waiter` for `reason`: counted, told, and rejected. */
export type Refuse = (waiter: Waiter, reason: BulkheadRejection) => void;

/** One acquire of a single permit for a call that found nobody waiting. */
class Ask implements ScriptTarget {
  constructor(
    private readonly owner: Admission,
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
    private readonly owner: Admission,
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

/** @internal */
export class Admission implements PermitOwner {
  readonly leases: Leases;
  private readonly wakeups: Wakeups;
  private pumping = false;
  /** Frees heard of (pub/sub messages and this process's releases). */
  private freedSeen = 0;
  /** Acquires of single calls on their way: a wake-up meanwhile is theirs, heard on reply. */
  private asking = 0;
  /** A permit may have been freed while a pump was on its way: pump again after it. */
  private dirty = false;
  private disposed = false;
  private nAdmitted = 0;

  constructor(
    private readonly name: string,
    private readonly clock: Clock,
    private readonly o: ResolvedRedisBulkheadOptions,
    private readonly calls: ScriptCalls,
    private readonly health: StoreHealth,
    private readonly line: WaitLine,
    private readonly refuse: Refuse,
    permitLost: Listeners<PermitLostEvent>,
    /** This process's pub/sub channel, and the `subscriber` and `client` options. */
    channel: string,
    subscriberOption: unknown,
    client: unknown,
  ) {
    const replies = {
      answered: (probe: boolean, live: number) => this.answered(probe, live),
      storeFailed: (probe: boolean, sent: number, error: unknown) =>
        this.health.failed(probe, sent, error),
    };
    this.leases = new Leases(name, clock, o.lease, calls, this, replies, permitLost);
    this.wakeups = new Wakeups(
      clock,
      channel,
      subscriberOption,
      client,
      o.pollInterval,
      o.random,
      this.onFreed,
      () => this.pump(),
    );
  }

  /** Calls given a permit. */
  get admitted(): number {
    return this.nAdmitted;
  }

  /**
   * Permits this process may hold while Redis is away, with `onStoreFailure: 'local'` (see
   * `RedisBulkhead.localShare`).
   */
  get localShare(): number {
    const n = this.o.instances ?? this.health.live;
    return n === 0 ? 1 : Math.floor(this.o.maxConcurrent / n);
  }

  /** A permit granted at once by `onStoreFailure`, counted as admitted. */
  admitLocally(): Permit {
    this.nAdmitted++;
    return this.leases.local();
  }

  /**
   * Stops: waiting calls are rejected with `error`, the heartbeat and the wake-ups end.
   * Permits still held are given back when their calls end.
   */
  stop(error: Error): void {
    this.disposed = true;
    for (let w = this.line.take(); w !== undefined; w = this.line.take()) w.rejected(error);
    this.line.clear();
    this.leases.stop();
    this.wakeups.stop();
  }

  /** A call asks for a permit. */
  arrive(waiter: Waiter): void {
    if (this.disposed) {
      waiter.rejected(new UsageError(`Bulkhead "${this.name}" was disposed`));
      return;
    }
    if (!waiter.live()) return;
    this.leases.start();
    if (this.line.hasWaiting()) {
      // Calls already wait: this one waits behind them, for the permits their pump asks for.
      if (this.line.hasRoom()) {
        this.queueUp(waiter);
        if (!this.pumping && !this.wakeups.polling) this.pump();
      } else {
        this.refuse(waiter, 'full');
      }
      return;
    }
    let probe = false;
    if (!this.health.available) {
      if (!this.health.probeDue()) {
        this.decideLocally(waiter);
        return;
      }
      this.health.startProbe();
      probe = true;
    }
    this.asking++;
    const now = this.clock.now();
    const ask = new Ask(this, waiter, now, probe, this.freedSeen);
    this.calls.acquire(1, this.line.hasRoom(), ask);
  }

  /** The reply to one call's own acquire. */
  asked(waiter: Waiter, sent: number, probe: boolean, raw: unknown, freedSeen: number): void {
    const reply = acquireReplyOf(raw);
    if (reply === undefined) {
      this.askFailed(waiter, sent, probe, new TypeError(`unexpected reply: ${String(raw)}`));
      return;
    }
    this.asking--;
    this.answered(probe, reply.live);
    if (reply.granted === 1) {
      const permit = this.leases.grant(reply.firstToken, reply.slots[0]!, sent);
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
    if (this.line.hasRoom()) {
      this.queueUp(waiter);
      if (this.pumping) return;
      // A permit freed after the script ran is heard of before its reply, when nobody waited
      // yet to be woken: ask again at once rather than at the next poll.
      if (this.freedSeen !== freedSeen) this.pump();
      else this.wakeups.schedulePoll(reply.wait);
    } else {
      this.refuse(waiter, 'full');
    }
  }

  /**
   * A wake-up came with no call waiting here any more: an acquire of nothing leaves the
   * waiting instances and wakes the next ones for the free slots.
   */
  private passOn(): void {
    this.calls.acquire(0, false, {
      replied: (raw) => {
        const reply = acquireReplyOf(raw);
        if (reply !== undefined) this.answered(false, reply.live);
      },
      failed: (error) => this.health.failed(false, this.clock.now(), error),
    });
  }

  /** One call's own acquire failed: `onStoreFailure` decides it. */
  askFailed(waiter: Waiter, sent: number, probe: boolean, error: unknown): void {
    this.asking--;
    this.health.failed(probe, sent, error);
    if (!waiter.live()) return;
    if (this.disposed) waiter.rejected(new UsageError(`Bulkhead "${this.name}" was disposed`));
    else this.decideLocally(waiter);
  }

  /** A reply after its deadline that granted permits nobody took: give them back. */
  lateGrant(raw: unknown): void {
    const reply = acquireReplyOf(raw);
    if (reply === undefined || reply.granted === 0) return;
    const members: string[] = [];
    for (let i = 0; i < reply.granted; i++) {
      members.push(this.calls.member(reply.firstToken + i, reply.slots[i]!));
    }
    this.sendRelease(members, undefined);
  }

  /** Asks Redis for permits for the calls in line (as many as wait, one round trip). */
  private pump(): void {
    if (this.pumping || this.disposed) return;
    const want = Math.min(this.line.count(), this.o.maxConcurrent);
    if (want === 0) {
      this.wakeups.cancelPoll();
      return;
    }
    let probe = false;
    if (!this.health.available) {
      if (!this.health.probeDue()) {
        this.serveLocally();
        if (this.line.hasWaiting()) this.wakeups.schedulePollIn(this.health.probeIn);
        return;
      }
      this.health.startProbe();
      probe = true;
    }
    this.wakeups.cancelPoll();
    this.pumping = true;
    this.dirty = false;
    this.calls.acquire(want, true, new Pump(this, this.clock.now(), probe));
  }

  /** The reply to a pump. */
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
      const permit = this.leases.grant(reply.firstToken + i, reply.slots[i]!, sent);
      const waiter = this.line.take();
      if (waiter !== undefined) {
        this.admit1(waiter, permit);
      } else {
        // Its caller left meanwhile.
        this.leases.release(permit);
        (unused ??= []).push(permit.member!);
      }
    }
    if (unused !== undefined) this.sendRelease(unused, undefined);
    if (!this.line.hasWaiting() || this.disposed) return;
    if (reply.wait < 0 || this.dirty) this.pump();
    else this.wakeups.schedulePoll(reply.wait);
  }

  /** A pump failed: the calls in line are served by `onStoreFailure`. */
  pumpFailed(sent: number, probe: boolean, error: unknown): void {
    this.pumping = false;
    this.health.failed(probe, sent, error);
    if (this.disposed) return;
    this.serveLocally();
    if (this.line.hasWaiting()) this.wakeups.schedulePollIn(Math.max(0, this.health.probeIn));
  }

  /** Decides a call by `onStoreFailure`. */
  private decideLocally(waiter: Waiter): void {
    const mode = this.o.onStoreFailure;
    if (mode === 'open' || (mode === 'local' && this.leases.inFlight < this.localShare)) {
      this.admit1(waiter, this.leases.local());
    } else if (mode === 'local' && this.line.hasRoom()) {
      this.queueUp(waiter);
      this.wakeups.schedulePollIn(Math.max(0, this.health.probeIn));
    } else {
      this.refuse(waiter, 'full');
    }
  }

  /** While Redis is away: admits calls in line within the local share. */
  private serveLocally(): void {
    const mode = this.o.onStoreFailure;
    if (mode === 'closed') {
      for (let w = this.line.take(); w !== undefined; w = this.line.take()) {
        this.refuse(w, 'full');
      }
      return;
    }
    while (mode === 'open' || this.leases.inFlight < this.localShare) {
      const waiter = this.line.take();
      if (waiter === undefined) return;
      this.admit1(waiter, this.leases.local());
    }
  }

  private admit1(waiter: Waiter, permit: Permit): void {
    this.nAdmitted++;
    waiter.admitted(permit);
  }

  /** Gives `permit` back; calls `done` once Redis has it (or failed to take it). */
  releasePermit(permit: Permit, done?: () => void): void {
    if (permit.released) {
      done?.();
      return;
    }
    const held = this.leases.release(permit);
    this.freedSeen++;
    if (held) this.sendRelease([permit.member!], [permit], done);
    else done?.();
    // While Redis answers, the release's reply says whether the freed slot is this process's
    // to take (it may be another's turn).
    if (this.disposed || this.health.available || !this.line.hasWaiting()) return;
    this.serveLocally();
  }

  /** Freed slots were handed to this process's calls in line: ask for them. */
  private takeHandedSlots(): void {
    if (this.disposed || !this.line.hasWaiting()) return;
    if (this.pumping) this.dirty = true;
    else this.pump();
  }

  private sendRelease(members: string[], permits: Permit[] | undefined, done?: () => void): void {
    // Whether calls wait here: the script then keeps this process's place in the line, and the
    // reply says how many freed slots are its turn to ask for.
    const waiting = !this.disposed && this.health.available && this.line.hasWaiting();
    this.calls.release(waiting, members, {
      replied: (raw) => {
        const reply = releaseReplyOf(raw, members.length);
        if (reply !== undefined) {
          this.answered(false, this.health.live);
          for (let i = 0; i < (permits?.length ?? 0); i++) {
            if (reply.flags[i] === 0) this.leases.lose(permits![i]!, 'expired');
          }
          if (reply.own > 0) this.takeHandedSlots();
        }
        done?.();
      },
      failed: (error) => {
        // The lease ends it in Redis: nothing renews it any more.
        this.health.failed(false, this.clock.now(), error);
        done?.();
        // The calls in line are served by `onStoreFailure` (or a probe).
        this.takeHandedSlots();
      },
    });
  }

  private queueUp(waiter: Waiter): void {
    this.line.add(waiter);
    this.wakeups.subscribe();
  }

  /** A permit was freed somewhere and handed to this process's turn (pub/sub). */
  private readonly onFreed = (): void => {
    this.freedSeen++;
    if (this.disposed || !this.health.available) return;
    if (this.pumping) this.dirty = true;
    else if (this.line.hasWaiting()) this.pump();
    else if (this.asking === 0) this.passOn();
  };

  /**
   * Loses `permit` once a whole lease has passed since its last acquire or renewal that
   * reached Redis was sent.
   */
  checkLease(permit: Permit): void {
    this.leases.check(permit);
  }

  /** Redis answered (`probe`: the probe), counting `live` instances. */
  private answered(probe: boolean, live: number): void {
    if (this.health.answered(probe, live) && !this.pumping && this.line.hasWaiting()) this.pump();
  }
}
