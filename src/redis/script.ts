import { integerOf } from './integerReply.js';

/**
 * The GCRA decision as one Lua script on one key, so a decision is atomic and costs one round
 * trip. All quantities are integer microseconds (Lua 5.1 numbers are doubles: exact up to
 * 2^53, and the store keeps every value below that).
 *
 * KEYS[1]: the limiter's key. ARGV: intervalUs, burst, permits, then optionally nowUs (absent
 * or '' = the server's TIME) and lease (absent or '' = permits: the most permits to take when
 * at least `permits` are free, and no more than `permits` plus the whole intervals the TAT is
 * ahead of now).
 * Returns { taken, aheadUs }: `taken` is the permits granted (>= 1) or, when refused, minus
 * the microseconds until the request would be granted; `aheadUs` is how far the TAT was ahead
 * of now before the decision. Everything else follows from these two (see
 * `decisionOf`): a reply of two integers is what keeps a decision's client work small.
 *
 * The key holds the theoretical arrival time (TAT). Keys and values only ever arrive as
 * KEYS/ARGV, never in the script text, so the script (and its SHA1) never changes.
 * Numbers go to `redis.call` as numbers: Redis writes them with `%.17g` (before 7) or the
 * shortest form that reads back the same (7 on), so every integer below 2^53 in full digits,
 * where `tostring` would print 1.7e+15; `string.format` would cost a Lua string each.
 * `redis.replicate_commands()` only matters on Redis < 5, where a write after TIME needs
 * effects replication; from 5 on it is the default (and from 7 on the call does nothing).
 */
export const GCRA_SCRIPT: string = `local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local permits = tonumber(ARGV[3])
local now = ARGV[4]
if now == nil or now == '' then
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(now)
end
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local allowAt = tat + permits * interval - burst * interval
if now < allowAt then return { now - allowAt, tat - now } end
local granted = permits
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  -- Extra permits only as many as are free and the key's backlog can hold: leased ones are
  -- spent before the TAT this decision started from.
  local free = math.floor((now - (tat - burst * interval)) / interval)
  local room = permits + math.floor((tat - now) / interval)
  granted = math.max(permits, math.min(tonumber(ARGV[5]), free, room))
end
local newTat = tat + granted * interval
local ttl = math.max(1, math.ceil((newTat - now) / 1000))
redis.call('SET', KEYS[1], newTat, 'PX', ttl)
return { granted, tat - now }
`;

/**
 * SHA1 of {@link GCRA_SCRIPT}, the name EVALSHA runs it by. Written out rather than computed so
 * the library needs no hashing code; a test checks it against the script, and the store takes
 * the SHA that SCRIPT LOAD returns anyway.
 */
export const GCRA_SCRIPT_SHA = '1afd18f5ac1de01faed67471ccd8324f6f92f447';

/** The outcome of one GCRA decision. */
export interface GcraDecision {
  /** Whether the permits were granted (and recorded). */
  readonly allowed: boolean;
  /** When refused: microseconds until the same request would be granted; 0 when allowed. */
  readonly retryAfterUs: number;
  /** Permits that could still be granted right now, after this decision. */
  readonly remaining: number;
  /** Permits taken: `permits`, up to `lease` when more were free; 0 when refused. */
  readonly granted: number;
  /** Microseconds the key's TAT was ahead of the server's time before the decision (>= 0). */
  readonly aheadUs: number;
}

/**
 * @internal The decision a reply of {@link GCRA_SCRIPT} carries, for a request of one permit
 * per `intervalUs` with bursts of `burst`; undefined for another reply. `remaining` is the
 * script's formula: the whole intervals of the burst not taken by the TAT after the decision.
 */
export function decisionOf(
  reply: unknown,
  intervalUs: number,
  burst: number,
): GcraDecision | undefined {
  if (!Array.isArray(reply) || reply.length !== 2) return undefined;
  const taken = integerOf(reply[0]);
  const aheadUs = integerOf(reply[1]);
  if (!(aheadUs >= 0) || taken === 0 || Number.isNaN(taken)) return undefined;
  const allowed = taken > 0;
  const granted = allowed ? taken : 0;
  const remaining = Math.floor(
    (burst * intervalUs - (aheadUs + granted * intervalUs)) / intervalUs,
  );
  return {
    allowed,
    retryAfterUs: allowed ? 0 : -taken,
    remaining: Math.max(remaining, 0),
    granted,
    aheadUs,
  };
}
