/**
 * The permits a Redis bulkhead's process holds, and their leases: each Redis permit is renewed
 * by one heartbeat per bulkhead (one script call for all), and lost once a whole lease passed
 * without a renewal Redis answered, or when Redis says it no longer holds it. Apart from the
 * gate because a lease lives on its own timer, whatever the calls and the line do.
 */
import type { Clock, TimerHandle } from '../../clock/Clock.js';
import type { Listeners } from '../../events/Listeners.js';
import { Permit, PermitLostError, type PermitLostEvent, type PermitOwner } from './permit.js';
import { renewReplyOf } from './replies.js';
import type { ScriptCalls } from './ScriptCalls.js';

/** @internal Where the replies to renewals are reported: the bulkhead's view of the store. */
export interface RenewalReplies {
  answered(probe: boolean, live: number): void;
  storeFailed(probe: boolean, sent: number, error: unknown): void;
}

/** @internal */
export class Leases {
  /** Redis permits held and renewed (not released, not lost). */
  private readonly held = new Set<Permit>();
  /** Permits not yet released (lost ones included): what the local share counts. */
  private running = 0;
  private heartbeat: TimerHandle | undefined = undefined;
  private renewing = false;
  private stopped = false;
  private nFallback = 0;
  private nLost = 0;

  constructor(
    private readonly name: string,
    private readonly clock: Clock,
    private readonly lease: number,
    private readonly calls: ScriptCalls,
    private readonly owner: PermitOwner,
    private readonly replies: RenewalReplies,
    private readonly permitLost: Listeners<PermitLostEvent>,
  ) {}

  /** Permits not yet released, from Redis and from `onStoreFailure`. */
  get inFlight(): number {
    return this.running;
  }

  /** Permits granted by `onStoreFailure`. */
  get fallbackAdmissions(): number {
    return this.nFallback;
  }

  /** Permits whose lease ended while held. */
  get permitsLost(): number {
    return this.nLost;
  }

  /** A permit Redis granted, its acquire sent at `sent`: held and renewed from now on. */
  grant(token: number, slot: number, sent: number): Permit {
    const member = this.calls.member(token, slot);
    const permit = new Permit(this.owner, member, token, slot, sent, this.clock.now());
    this.held.add(permit);
    this.running++;
    return permit;
  }

  /** A permit granted by `onStoreFailure`, with no lease. */
  local(): Permit {
    this.nFallback++;
    this.running++;
    return new Permit(this.owner, undefined, undefined, undefined, 0, this.clock.now());
  }

  /**
   * `permit` (not released yet) is given back: no longer counted nor renewed. Returns true when
   * Redis holds it still, as far as this process knows: its release is to be sent.
   */
  release(permit: Permit): boolean {
    permit.released = true;
    this.running--;
    return permit.member !== undefined && this.held.delete(permit);
  }

  /** On first use: loads the scripts and starts renewing. */
  start(): void {
    if (this.heartbeat !== undefined || this.stopped) return;
    this.calls.preload();
    this.heartbeat = this.clock.setTimer(this.beat, this.lease / 3, false);
  }

  /** Stops renewing (permits still held are given back when their calls end). */
  stop(): void {
    this.stopped = true;
    if (this.heartbeat !== undefined) this.clock.clearTimer(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * Every third of the lease: permits not renewed for a whole lease are lost; the rest are
   * renewed, and the instance counted live, in one script call.
   */
  private readonly beat = (): void => {
    this.heartbeat = this.clock.setTimer(this.beat, this.lease / 3, false);
    const now = this.clock.now();
    for (const permit of this.held) this.check(permit);
    if (this.renewing) return;
    this.renewing = true;
    const permits = [...this.held];
    this.calls.renew(permits, {
      replied: (raw) => {
        this.renewing = false;
        const reply = renewReplyOf(raw);
        if (reply === undefined) {
          this.replies.storeFailed(false, now, new TypeError(`unexpected reply: ${String(raw)}`));
          return;
        }
        this.replies.answered(false, reply.live);
        const lost = reply.lost.length === 0 ? undefined : new Set(reply.lost);
        for (const p of permits) {
          if (p.released || p.lostWith !== undefined) continue;
          if (lost?.has(p.member!)) this.lose(p, 'expired');
          else p.renewedAt = now;
        }
      },
      failed: (error) => {
        this.renewing = false;
        this.replies.storeFailed(false, now, error);
      },
    });
  };

  /**
   * Loses `permit` once a whole lease has passed since its last acquire or renewal that
   * reached Redis was sent: Redis started the lease no earlier than that.
   */
  check(permit: Permit): void {
    if (permit.member !== undefined && this.clock.now() - permit.renewedAt >= this.lease) {
      this.lose(permit, 'unrenewed');
    }
  }

  /** `permit`'s lease ended while its call held it: aborts its signal and tells the listeners. */
  lose(permit: Permit, reason: PermitLostEvent['reason']): void {
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
}
