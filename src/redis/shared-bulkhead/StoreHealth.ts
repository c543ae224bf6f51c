/**
 * Whether Redis answers a Redis bulkhead, how many processes it last counted live, and when to
 * probe it again while it does not. Apart from the gate because every script call reports to
 * it (acquires, releases, renewals), while what the calls do meanwhile (`onStoreFailure`) is
 * the gate's to decide.
 */
import type { Clock } from '../../clock/Clock.js';
import type { Listeners } from '../../events/Listeners.js';
import type { StoreStateEvent } from '../RedisRateLimiter.js';

/** @internal */
export class StoreHealth {
  private up = true;
  private probing = false;
  private nextProbe = 0;
  private liveInstances = 0;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly probeInterval: number,
    private readonly stateChanged: Listeners<StoreStateEvent>,
  ) {}

  /** False from a failed script call until Redis answers again. */
  get available(): boolean {
    return this.up;
  }

  /** Processes whose bulkhead of this name was live at the last reply (0: none seen yet). */
  get live(): number {
    return this.liveInstances;
  }

  /** ms until the next probe is due (at most 0 when it is). */
  get probeIn(): number {
    return this.nextProbe - this.clock.now();
  }

  /** While Redis is away: no probe is on its way and the next is due. */
  probeDue(): boolean {
    return !this.probing && this.clock.now() >= this.nextProbe;
  }

  /** A script call is sent as the probe. */
  startProbe(): void {
    this.probing = true;
  }

  /**
   * Redis answered a call (`probe`: the probe), counting `live` instances; returns true when it
   * had been away until then.
   */
  answered(probe: boolean, live: number): boolean {
    if (probe) this.probing = false;
    this.liveInstances = live;
    if (this.up) return false;
    this.up = true;
    if (this.stateChanged.size !== 0) this.stateChanged.emit({ available: true });
    return true;
  }

  /** A call sent at `sent` (`probe`: the probe) failed with `error`. */
  failed(probe: boolean, sent: number, error: unknown): void {
    if (probe) {
      this.probing = false;
      this.nextProbe = sent + this.probeInterval;
    }
    if (!this.up || this.stopped) return;
    this.up = false;
    this.nextProbe = this.clock.now() + this.probeInterval;
    if (this.stateChanged.size !== 0) this.stateChanged.emit({ available: false, error });
  }

  /** The bulkhead was disposed: a failure no longer changes the state. */
  stop(): void {
    this.stopped = true;
  }
}
