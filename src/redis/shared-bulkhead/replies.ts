/**
 * What the Redis bulkhead's scripts (scripts.ts) reply, read back: each reply checked for its
 * shape, undefined for any other.
 */
import { integerOf } from '../integerReply.js';

/** @internal The reply of `BULKHEAD_ACQUIRE_SCRIPT`. */
export interface AcquireReply {
  readonly granted: number;
  readonly firstToken: number;
  readonly live: number;
  /** ms until the earliest lease ends when the set is full, else -1. */
  readonly wait: number;
  /** The slot of each permit granted. */
  readonly slots: readonly number[];
}

/** @internal The reply of `BULKHEAD_ACQUIRE_SCRIPT`, or undefined for another shape. */
export function acquireReplyOf(reply: unknown): AcquireReply | undefined {
  if (!Array.isArray(reply) || reply.length < 4) return undefined;
  const granted = integerOf(reply[0]);
  const firstToken = integerOf(reply[1]);
  const live = integerOf(reply[2]);
  const wait = integerOf(reply[3]);
  if (!(granted >= 0 && firstToken >= 0 && live >= 0 && wait >= -1)) return undefined;
  if (reply.length !== 4 + granted) return undefined;
  const slots = reply.slice(4).map(integerOf);
  if (!slots.every((slot) => slot >= 0)) return undefined;
  return { granted, firstToken, live, wait, slots };
}

/** @internal The reply of `BULKHEAD_RENEW_SCRIPT`: live instances and the members lost. */
export function renewReplyOf(reply: unknown): { live: number; lost: string[] } | undefined {
  if (!Array.isArray(reply) || reply.length < 1) return undefined;
  const live = integerOf(reply[0]);
  if (!(live >= 0)) return undefined;
  const lost: string[] = [];
  for (let i = 1; i < reply.length; i++) lost.push(String(reply[i]));
  return { live, lost };
}

/**
 * @internal The reply of `BULKHEAD_RELEASE_SCRIPT`: one flag per member, and the freed
 * slots handed to this instance.
 */
export function releaseReplyOf(
  reply: unknown,
  count: number,
): { flags: number[]; own: number } | undefined {
  if (!Array.isArray(reply) || reply.length !== count + 1) return undefined;
  const flags = reply.slice(0, count).map(integerOf);
  const own = integerOf(reply[count]);
  if (!(own >= 0) || !flags.every((f) => f === 0 || f === 1)) return undefined;
  return { flags, own };
}
