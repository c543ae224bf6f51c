import type { Clock } from '../clock/Clock.js';
import type { GcraDecision } from './script.js';

// Lease mode (`lease` > 1): a decision on a key with a backlog takes extra permits that this
// process spends itself, without a round trip, while the backlog lasts.

/**
 * @internal Permits a process took ahead in one decision, to spend until `until` (ms of its
 * clock).
 */
export interface Lease {
  left: number;
  until: number;
  /** When the key's backlog after the decision ends: how much the next lease may take. */
  backlogUntil: number;
  /** A decision asking for a lease on this key is on its way: others ask for their own only. */
  asking: boolean;
  /** The last decision was a refusal: the key is at its limit, where leases would go unspent. */
  refused: boolean;
  /**
   * The key's TAT on Redis after the last decision, in µs of the process's clock, taken at
   * the reply (never earlier than on Redis): leased permits, spent or not, are in it.
   */
  tatUs: number;
}

/**
 * @internal Permits to ask for, up to `size`, on a key last seen with a backlog until
 * `last.backlogUntil`: as many as that backlog can still hold after a round trip (`rtt` ms),
 * so no lease is taken on an idle key (it could not be spent).
 */
export function permitsToAsk(
  last: Lease,
  permits: number,
  now: number,
  rtt: number,
  intervalUs: number,
  size: number,
): number {
  const room = Math.floor(((last.backlogUntil - now - rtt) * 1_000) / intervalUs);
  return Math.max(permits, Math.min(size, room));
}

/**
 * @internal The lease a key holds after `decision` on `permits`, sent at `sent`, when it held
 * `held` before; `tatUs` is the key's TAT after it (see {@link Lease.tatUs}).
 */
export function leaseAfter(
  held: Lease | undefined,
  permits: number,
  sent: number,
  decision: GcraDecision,
  intervalUs: number,
  clock: Clock,
  tatUs: number,
): Lease {
  // Leased permits may be spent while the backlog the key had lasts (in our clock, from the
  // send time: never later than on Redis's).
  const aheadMs = decision.aheadUs / 1_000;
  let left = decision.granted > permits ? decision.granted - permits : 0;
  let until = sent + aheadMs;
  if (held !== undefined && held.left > 0 && clock.now() <= held.until) {
    // Permits still held from an earlier lease are kept; all are spent by the earlier end.
    left += held.left;
    until = Math.min(until, held.until);
  }
  return {
    left,
    until,
    backlogUntil: sent + aheadMs + (decision.granted * intervalUs) / 1_000,
    asking: false,
    refused: !decision.allowed,
    tatUs,
  };
}
