/**
 * The GCRA decision as one Lua script on one key, so a decision is atomic and costs one round
 * trip. All quantities are integer microseconds (Lua 5.1 numbers are doubles: exact up to
 * 2^53, and the store keeps every value below that).
 *
 * KEYS[1]: the limiter's key. ARGV: intervalUs, burst, permits, nowUs ('' = the server's TIME),
 * lease ('' = permits: the most permits to take when at least `permits` are free, and no more
 * than `permits` plus the whole intervals the TAT is ahead of now).
 * Returns { allowed (1|0), retryAfterUs (0 when allowed), remaining, granted (permits taken),
 * aheadUs (how far the TAT was ahead of now before the decision) }.
 *
 * The key holds the theoretical arrival time (TAT). Keys and values only ever arrive as
 * KEYS/ARGV, never in the script text, so the script (and its SHA1) never changes.
 * `string.format('%.0f', x)` writes numbers: `tostring` would print 1.7e+15.
 * `redis.replicate_commands()` only matters on Redis < 5, where a write after TIME needs
 * effects replication; from 5 on it is the default (and from 7 on the call does nothing).
 */
export const GCRA_SCRIPT: string = `local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local permits = tonumber(ARGV[3])
local now
if ARGV[4] == '' then
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[4])
end
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local free = math.floor((now - (tat - burst * interval)) / interval)
local granted = permits
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  -- Extra permits only as many as the key's backlog can hold: leased ones are spent before
  -- the TAT this decision started from.
  local room = permits + math.floor((tat - now) / interval)
  granted = math.max(permits, math.min(tonumber(ARGV[5]), free, room))
end
local newTat = tat + granted * interval
local allowAt = tat + permits * interval - burst * interval
local allowed = now >= allowAt
local retryAfter = 0
local after = tat
if allowed then
  local ttl = math.max(1, math.ceil((newTat - now) / 1000))
  redis.call('SET', KEYS[1], string.format('%.0f', newTat), 'PX', string.format('%.0f', ttl))
  after = newTat
else
  retryAfter = allowAt - now
end
local remaining = math.floor((now - (after - burst * interval)) / interval)
if remaining < 0 then remaining = 0 end
if not allowed then granted = 0 end
return { allowed and 1 or 0, retryAfter, remaining, granted, tat - now }
`;

/**
 * SHA1 of {@link GCRA_SCRIPT}, the name EVALSHA runs it by. Written out rather than computed so
 * the library needs no hashing code; a test checks it against the script, and the store takes
 * the SHA that SCRIPT LOAD returns anyway.
 */
export const GCRA_SCRIPT_SHA = 'f56b8b52f32b2aa4e38160beeee342a1cfd720f8';

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

/** @internal The decision a reply of {@link GCRA_SCRIPT} carries; undefined for another reply. */
export function decisionOf(reply: unknown): GcraDecision | undefined {
  if (!Array.isArray(reply) || reply.length !== 5) return undefined;
  const allowed = integerOf(reply[0]);
  const retryAfterUs = integerOf(reply[1]);
  const remaining = integerOf(reply[2]);
  const granted = integerOf(reply[3]);
  const aheadUs = integerOf(reply[4]);
  if (
    (allowed === 0 || allowed === 1) &&
    retryAfterUs >= 0 &&
    remaining >= 0 &&
    granted >= 0 &&
    aheadUs >= 0
  ) {
    return { allowed: allowed === 1, retryAfterUs, remaining, granted, aheadUs };
  }
  return undefined;
}

/**
 * An integer reply as a number: clients give numbers, but a client told to map integers to
 * strings or bigints (node-redis `typeMapping`) is served too. NaN for anything else.
 */
function integerOf(value: unknown): number {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : Number.NaN;
  if (typeof value === 'bigint' || (typeof value === 'string' && /^-?\d+$/.test(value))) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : Number.NaN;
  }
  return Number.NaN;
}
