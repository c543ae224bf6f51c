/**
 * The Lua scripts of shared breaker signals. Every time in them is Redis `TIME` (ms, or µs for
 * fencing tokens); a client's clock never reaches Redis, and what comes back is a duration
 * (ms left), which each instance adds to its own monotonic clock. Keys and values arrive only
 * as KEYS/ARGV, so the texts (and their SHA1s) never change. Each script is O(log n) in the
 * instances of one breaker name, apart from dropping expired members and counting the reports
 * (O(reports), each a sorted-set lookup).
 */

/** The server's time in ms, and the start of each script. */
const NOW = `if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * The heartbeat of `instance` (live for `liveMs`, in `liveKey`), after dropping the instances
 * whose heartbeat expired, with their reports and join times. An instance that was not live
 * joins: its reports count from now, or, when `fresh` is '1' (its identity may be new after a
 * restart), from `liveMs` on and not before every instance live now would have expired, so the
 * process it replaced can never count beside it.
 */
const BEAT = `for _, gone in ipairs(redis.call('ZRANGEBYSCORE', liveKey, '-inf', now)) do
  redis.call('ZREM', liveKey, gone)
  redis.call('ZREM', joinedKey, gone)
  redis.call('ZREM', reportsKey, gone)
end
if not redis.call('ZSCORE', liveKey, instance) then
  local from = now
  if fresh == '1' then
    from = now + liveMs
    local last = redis.call('ZRANGE', liveKey, -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) > from then from = tonumber(last[2]) end
  end
  redis.call('ZADD', joinedKey, from, instance)
end
redis.call('ZADD', liveKey, now + liveMs, instance)
if redis.call('PTTL', liveKey) < liveMs then redis.call('PEXPIRE', liveKey, liveMs) end
if redis.call('PTTL', joinedKey) < liveMs then redis.call('PEXPIRE', joinedKey, liveMs) end
`;

/**
 * Records `instance` open for `breakMs` in the reports (key `reportsKey`), after its heartbeat,
 * and opens the shared state (`stateKey`) for that long when the reports that count reach the
 * quorum: `quorum` instances, or more when `share` (a share of the live instances) asks for
 * more. A report counts while its instance is live and from its join time. Publishes
 * `open <ms>` on `channel` when it opens or lengthens the shared state. Sets `reports`, `need`,
 * `opened` (0|1), `remaining` (ms the shared state is open, or 0).
 */
const REPORT = `${BEAT}redis.call('ZREMRANGEBYSCORE', reportsKey, '-inf', now)
redis.call('ZADD', reportsKey, now + breakMs, instance)
if redis.call('PTTL', reportsKey) < breakMs then redis.call('PEXPIRE', reportsKey, breakMs) end
local reports = 0
for _, reporter in ipairs(redis.call('ZRANGE', reportsKey, 0, -1)) do
  local from = redis.call('ZSCORE', joinedKey, reporter)
  if from and tonumber(from) <= now then reports = reports + 1 end
end
local need = quorum
if share ~= '' then
  local byShare = math.ceil(tonumber(share) * redis.call('ZCARD', liveKey) - 1e-9)
  if byShare > need then need = byShare end
end
local remaining = redis.call('PTTL', stateKey)
local opened = 0
if reports >= need and remaining < breakMs then
  redis.call('SET', stateKey, '1', 'PX', breakMs)
  redis.call('PUBLISH', channel, 'open ' .. breakMs)
  remaining = breakMs
  opened = 1
end
if remaining < 0 then remaining = 0 end
`;

/**
 * An instance's breaker opened: its report, and the shared state when the quorum is reached.
 * KEYS: reports, live, state, joined. ARGV: instance, breakMs, quorum, share ('' for none),
 * channel, liveMs, fresh ('1' | '0').
 * Returns { reports that count, need, opened (0|1), remaining ms of the shared state }.
 */
export const REPORT_SCRIPT: string = `${NOW}local reportsKey, liveKey, stateKey, joinedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local instance, breakMs, quorum = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local share, channel, liveMs, fresh = ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7]
${REPORT}return { reports, need, opened, remaining }
`;

/**
 * An instance's breaker closed on its own probes: its report is withdrawn.
 * KEYS: reports. ARGV: instance. Returns 1.
 */
export const WITHDRAW_SCRIPT: string = `${NOW}redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
`;

/**
 * Asks for the cluster-wide half-open probe lease.
 * KEYS: probe, fence, state. ARGV: holder (the process's own id), leaseMs, fenceTtlMs.
 * Returns { granted (0|1), token (the fencing token, 0 when not granted), ms (the lease's,
 * or how long another instance holds it, or how long the shared state is still open),
 * sharedOpen (0|1) }. Tokens strictly increase: the last one is kept (with a long TTL), and a
 * new one is at least the server's time in µs, so it still increases after that key expired.
 * A holder that asks again while it holds the lease (a reply it never got) gets it back; a
 * restarted process is a new holder, whatever its identity.
 */
export const LEASE_SCRIPT: string = `local open = redis.call('PTTL', KEYS[3])
if open > 0 then return { 0, 0, open, 1 } end
local held = redis.call('GET', KEYS[1])
if held then
  local sep = string.find(held, ' ', 1, true)
  if string.sub(held, 1, sep - 1) == ARGV[1] then
    return { 1, tonumber(string.sub(held, sep + 1)), redis.call('PTTL', KEYS[1]), 0 }
  end
  return { 0, 0, redis.call('PTTL', KEYS[1]), 0 }
end
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local token = tonumber(redis.call('GET', KEYS[2]) or '0') + 1
if token < nowUs then token = nowUs end
local tokenText = string.format('%.0f', token)
redis.call('SET', KEYS[2], tokenText, 'PX', ARGV[3])
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. tokenText, 'PX', ARGV[2])
return { 1, token, tonumber(ARGV[2]), 0 }
`;

/**
 * The outcome of a leased probe, accepted only while the lease is still the caller's (its
 * holder id and fencing token): a stale outcome changes nothing. 'ok' ends the lease, clears
 * every report and publishes `closed <token>`; 'failed' ends it, reports the caller open (as
 * REPORT_SCRIPT) and publishes `reopen <ms>`; 'release' only ends it.
 * KEYS: probe, reports, live, state, joined. ARGV: holder, token, outcome, breakMs, quorum,
 * share, channel, instance, liveMs, fresh. Returns { accepted (0|1), remaining ms of the shared
 * state }.
 */
export const OUTCOME_SCRIPT: string = `${NOW}if redis.call('GET', KEYS[1]) ~= ARGV[1] .. ' ' .. ARGV[2] then return { 0, 0 } end
redis.call('DEL', KEYS[1])
if ARGV[3] == 'ok' then
  redis.call('DEL', KEYS[2])
  redis.call('PUBLISH', ARGV[7], 'closed ' .. ARGV[2])
  return { 1, 0 }
end
if ARGV[3] ~= 'failed' then return { 1, 0 } end
local reportsKey, liveKey, stateKey, joinedKey = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local breakMs, quorum = tonumber(ARGV[4]), tonumber(ARGV[5])
local share, channel = ARGV[6], ARGV[7]
local instance, liveMs, fresh = ARGV[8], tonumber(ARGV[9]), ARGV[10]
${REPORT}redis.call('PUBLISH', channel, 'reopen ' .. breakMs)
return { 1, remaining }
`;

/**
 * The poll (the fallback of pub/sub) and heartbeat of one instance.
 * KEYS: live, state, probe, joined, reports. ARGV: instance, liveMs, fresh ('1' | '0').
 * Returns { ms the shared state is still open (0: closed), ms the probe lease is still held
 * (0: free) }.
 */
export const SYNC_SCRIPT: string = `${NOW}local liveKey, joinedKey, reportsKey = KEYS[1], KEYS[4], KEYS[5]
local instance, liveMs, fresh = ARGV[1], tonumber(ARGV[2]), ARGV[3]
${BEAT}local open = redis.call('PTTL', KEYS[2])
local probe = redis.call('PTTL', KEYS[3])
if open < 0 then open = 0 end
if probe < 0 then probe = 0 end
return { open, probe }
`;

/** A script with the SHA1 EVALSHA runs it by (checked against the text by a test). */
export interface LuaScript {
  readonly text: string;
  readonly sha: string;
}
