/**
 * The script calls of a Redis bulkhead: which keys and arguments each of its three scripts is
 * sent with, the members permits are stored as, and the round trips they cost. Apart from the
 * gate so that what goes to Redis is read in one place, next to the scripts (scripts.ts) and
 * how they are run (ScriptRunner.ts).
 */
import type { ResolvedRedisBulkheadOptions } from './options.js';
import type { Permit } from './permit.js';
import { Script, ScriptRunner, type ScriptTarget } from './ScriptRunner.js';
import {
  BULKHEAD_ACQUIRE_SCRIPT,
  BULKHEAD_ACQUIRE_SCRIPT_SHA,
  BULKHEAD_RELEASE_SCRIPT,
  BULKHEAD_RELEASE_SCRIPT_SHA,
  BULKHEAD_RENEW_SCRIPT,
  BULKHEAD_RENEW_SCRIPT_SHA,
} from './scripts.js';

/** @internal The Redis keys of a bulkhead (see `RedisBulkhead.keys`). */
export interface BulkheadKeys {
  readonly permits: string;
  readonly fence: string;
  readonly instances: string;
  readonly waiting: string;
}

/** @internal */
export class ScriptCalls {
  private readonly runner: ScriptRunner;
  private readonly acquireScript = new Script(BULKHEAD_ACQUIRE_SCRIPT, BULKHEAD_ACQUIRE_SCRIPT_SHA);
  private readonly renewScript = new Script(BULKHEAD_RENEW_SCRIPT, BULKHEAD_RENEW_SCRIPT_SHA);
  private readonly releaseScript = new Script(BULKHEAD_RELEASE_SCRIPT, BULKHEAD_RELEASE_SCRIPT_SHA);
  private readonly acquireKeys: readonly string[];
  private readonly renewKeys: readonly string[];
  private readonly releaseKeys: readonly string[];
  private readonly instanceId: string;
  private readonly leaseArg: string;
  private readonly ttlArg: string;
  private readonly limitArg: string;
  /** Arguments of an acquire of one permit whose call waits if refused, and of one that does not. */
  private readonly oneArgs: readonly string[];
  private readonly oneArgsNoWait: readonly string[];
  private sent = 0;

  constructor(
    o: ResolvedRedisBulkheadOptions,
    keys: BulkheadKeys,
    /** The prefix of the instances' pub/sub channels. */
    private readonly channelPrefix: string,
  ) {
    this.instanceId = o.instanceId;
    this.acquireKeys = [keys.permits, keys.fence, keys.instances, keys.waiting];
    this.renewKeys = [keys.permits, keys.instances];
    this.releaseKeys = [keys.permits, keys.instances, keys.waiting];
    this.leaseArg = String(Math.ceil(o.lease));
    this.ttlArg = String(Math.ceil(2 * o.lease));
    this.limitArg = String(o.maxConcurrent);
    this.oneArgs = this.acquireArgs(1, true);
    this.oneArgsNoWait = this.acquireArgs(1, false);
    this.runner = new ScriptRunner(o.adapter, o.clock, o.name, o.timeout);
  }

  /** Script calls sent to Redis (acquire, release and renewals). */
  get roundTrips(): number {
    return this.sent;
  }

  /** Loads the scripts, on first use. */
  preload(): void {
    this.runner.preload([this.acquireScript, this.releaseScript, this.renewScript]);
  }

  /**
   * Asks for `want` permits (0: leaves the waiting instances and wakes the next ones); with
   * `willWait`, this process keeps a place in Redis's line when they are refused.
   */
  acquire(want: number, willWait: boolean, target: ScriptTarget): void {
    this.sent++;
    const args =
      want === 1
        ? willWait
          ? this.oneArgs
          : this.oneArgsNoWait
        : this.acquireArgs(want, willWait);
    this.runner.call(this.acquireScript, this.acquireKeys, args, target);
  }

  /**
   * Gives back the permits stored as `members`; `waiting`: calls wait here, so the script keeps
   * this process's place in the line, and the reply says how many freed slots are its turn.
   */
  release(waiting: boolean, members: readonly string[], target: ScriptTarget): void {
    this.sent++;
    const args = [this.channelPrefix, this.instanceId, waiting ? '1' : '0', ...members];
    this.runner.call(this.releaseScript, this.releaseKeys, args, target);
  }

  /** Renews the Redis permits `permits`, and counts this instance live. */
  renew(permits: readonly Permit[], target: ScriptTarget): void {
    this.sent++;
    const args = [this.leaseArg, this.instanceId, this.ttlArg];
    for (const p of permits) args.push(p.member!);
    this.runner.call(this.renewScript, this.renewKeys, args, target);
  }

  /** The member in Redis of the permit of fencing token `token` in slot `slot`. */
  member(token: number, slot: number): string {
    return `${this.instanceId}:${token}:${slot}`;
  }

  private acquireArgs(want: number, willWait: boolean): string[] {
    const { limitArg, leaseArg, instanceId, ttlArg, channelPrefix } = this;
    const wait = willWait ? '1' : '0';
    return [limitArg, String(want), leaseArg, instanceId, ttlArg, channelPrefix, wait];
  }
}
