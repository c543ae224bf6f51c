/**
 * A Redis bulkhead's permit as its caller holds it (fencing token, slot, lease state, signal),
 * and the event and error of a lost one. Apart from the bulkhead because a permit is the
 * caller's handle: it reads its lease and gives itself back through {@link PermitOwner}.
 */
import { nameErrorClass } from '../../errors/BreakwaterError.js';

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

nameErrorClass(PermitLostError, 'PermitLostError');

/** @internal What a permit asks of the bulkhead that granted it. */
export interface PermitOwner {
  /** Loses `permit` if its lease may have ended. */
  checkLease(permit: Permit): void;
  /** Gives `permit` back; calls `done` once Redis has it (or failed to take it). */
  releasePermit(permit: Permit, done?: () => void): void;
}

/** @internal */
export class Permit implements RedisPermit {
  released = false;
  /** Set once the loss is known (by reading `lost`, a heartbeat or a release reply). */
  lostWith: PermitLostError | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  constructor(
    private readonly owner: PermitOwner,
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
