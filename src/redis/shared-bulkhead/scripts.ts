/**
 * The Lua scripts of a Redis bulkhead: permits are members of one sorted set whose scores are
 * their lease expiries in ms of Redis `TIME` (the only clock the shared state uses). Each
 * script is one round trip; keys arrive as KEYS and values as ARGV only, so the scripts (and
 * their SHA1s) never change. Every key is written with a TTL: a bulkhead nobody uses leaves
 * nothing behind after two leases.
 *
 * The fencing token of a permit is `max(last token + 1, TIME in µs)`: strictly increasing
 * while the token key lives, and still above every earlier token after the key expired or the
 * data was lost (a restart, FLUSHALL), as long as the server's clock does not step back.
 * Each permit also holds a slot, the lowest of [0, limit) no live permit holds: one live
 * holder per slot, and (the tokens increasing with time) tokens increasing along each slot's
 * holders, which is what a store's fencing check keys on. Members are
 * `<instance id>:<fencing token>:<slot>`, so a process knows the members it holds from the
 * reply alone. `string.format('%.0f', x)` writes integers: `tostring` would print 1.7e+15.
 */

/**
 * Lua `wake(n, self)`, given the KEYS index of the waiting instances and of the live ones and
 * the ARGV index of the channel prefix: hands `n` freed slots to the instances that have waited
 * longest (each leaves the line; instances no longer live are dropped), by a message on each
 * one's channel, except `self`, which is counted instead. Returns the slots counted for `self`
 * and those left over when nobody else waits. `now` (ms) must be defined before it.
 */
function wakeFunction(waiting: number, instances: number, channel: number): string {
  return `local function wake(n, self)
  local own = 0
  while n > 0 do
    local w = redis.call('ZRANGE', KEYS[${waiting}], 0, 0)[1]
    if not w then break end
    redis.call('ZREM', KEYS[${waiting}], w)
    if w == self then
      own = own + 1
      n = n - 1
    else
      local seen = redis.call('ZSCORE', KEYS[${instances}], w)
      if seen and tonumber(seen) > now then
        redis.call('PUBLISH', ARGV[${channel}] .. w, 1)
        n = n - 1
      end
    end
  end
  return own, n
end`;
}

/**
 * KEYS: permits (zset), fencing token (string), instances (zset), waiting instances (zset).
 * ARGV: limit, permits wanted, lease ms, instance id, key TTL ms, wake-up channel prefix,
 * 1 when the calls not granted will wait (else 0).
 * Drops expired permits, grants up to the wanted number within the limit (tokens first,
 * first + 1, ...; each the lowest free slot, found among the at most `limit` live members),
 * and registers the instance as live for one lease. An instance granted less than it wanted,
 * whose calls wait, joins the waiting instances (keeping its place if already there); else it
 * leaves them, and slots still free then wake as many waiting instances (so a wake-up that
 * found nobody waiting, sent on by wanting 0, or a lost one, heals).
 * Returns { granted, first token (0 when none), live instances, ms until the earliest lease
 * ends when the set is full after the grant (else -1), then the slot of each permit granted }.
 */
export const BULKHEAD_ACQUIRE_SCRIPT: string = `if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(nowUs / 1000)
local limit = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local ttl = tonumber(ARGV[5])
${wakeFunction(4, 3, 6)}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
local granted = math.min(wanted, limit - held)
local first = 0
local slots = {}
if granted > 0 then
  local used = {}
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local s = string.match(m, ':(%d+)$')
    if s then used[tonumber(s)] = true end
  end
  local last = tonumber(redis.call('GET', KEYS[2]) or '0')
  first = math.max(last + 1, nowUs)
  local slot = 0
  for i = 0, granted - 1 do
    while used[slot] do slot = slot + 1 end
    used[slot] = true
    slots[i + 1] = slot
    redis.call('ZADD', KEYS[1], now + lease,
      ARGV[4] .. ':' .. string.format('%.0f', first + i) .. ':' .. slot)
  end
  redis.call('SET', KEYS[2], string.format('%.0f', first + granted - 1), 'PX', ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
else
  granted = 0
end
redis.call('ZADD', KEYS[3], now + lease, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('PEXPIRE', KEYS[3], ttl)
local live = redis.call('ZCARD', KEYS[3])
if granted < wanted and ARGV[7] == '1' then
  redis.call('ZADD', KEYS[4], 'NX', now, ARGV[4])
  redis.call('PEXPIRE', KEYS[4], ttl)
else
  redis.call('ZREM', KEYS[4], ARGV[4])
  wake(limit - held - granted)
end
local wait = -1
if held + granted >= limit then
  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if head[2] then wait = tonumber(head[2]) - now end
end
local reply = { granted, first, live, wait }
for i = 1, #slots do reply[4 + i] = slots[i] end
return reply
`;

/**
 * KEYS: permits (zset), instances (zset).
 * ARGV: lease ms, instance id, key TTL ms, then the members to renew.
 * Drops expired permits, extends each member still held by one lease, and registers the
 * instance as live. Returns { live instances, ...members no longer held (expired or gone) }.
 */
export const BULKHEAD_RENEW_SCRIPT: string = `if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = math.floor((tonumber(t[1]) * 1000000 + tonumber(t[2])) / 1000)
local lease = tonumber(ARGV[1])
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local reply = { 0 }
for i = 4, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i])
  else
    reply[#reply + 1] = ARGV[i]
  end
end
if #ARGV >= 4 then redis.call('PEXPIRE', KEYS[1], ttl) end
redis.call('ZADD', KEYS[2], now + lease, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('PEXPIRE', KEYS[2], ttl)
reply[1] = redis.call('ZCARD', KEYS[2])
return reply
`;

/**
 * KEYS: permits (zset), instances (zset), waiting instances (zset).
 * ARGV: wake-up channel prefix, instance id, 1 when calls of this instance wait else 0, then
 * the members to release.
 * Removes the members, and hands each freed slot to the instance that has waited longest (live
 * ones only), taking it out of the waiting instances: another is woken by a message on its own
 * channel; this one (when its calls wait) learns it from the reply, as it does when nobody else
 * waits. An instance whose calls no longer wait leaves the waiting instances. Returns one flag
 * per member (1 when it was held, 0 when its lease had already ended), then the number of
 * freed slots this instance should take.
 */
export const BULKHEAD_RELEASE_SCRIPT: string = `if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = math.floor((tonumber(t[1]) * 1000000 + tonumber(t[2])) / 1000)
${wakeFunction(3, 2, 1)}
local freed = 0
local flags = {}
for i = 4, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  flags[i - 3] = 0
  if score then
    redis.call('ZREM', KEYS[1], ARGV[i])
    freed = freed + 1
    if tonumber(score) > now then flags[i - 3] = 1 end
  end
end
local own, left = 0, 0
if ARGV[3] == '1' then
  own, left = wake(freed, ARGV[2])
  own = own + left
else
  redis.call('ZREM', KEYS[3], ARGV[2])
  wake(freed)
end
flags[#flags + 1] = own
return flags
`;

/**
 * SHA1s of the scripts, the names EVALSHA runs them by: written out so the library needs no
 * hashing code (a test checks them against the scripts; the store takes what SCRIPT LOAD
 * returns anyway).
 */
export const BULKHEAD_ACQUIRE_SCRIPT_SHA = '1b2784e6c13bfa7b778f5064be3e9d4edf1e3ae6';
/** SHA1 of {@link BULKHEAD_RENEW_SCRIPT}. */
export const BULKHEAD_RENEW_SCRIPT_SHA = 'd6e1c21fbf532be633b630fdae8dbbcf08eca398';
/** SHA1 of {@link BULKHEAD_RELEASE_SCRIPT}. */
export const BULKHEAD_RELEASE_SCRIPT_SHA = 'c1fe909b688974e033ad1952c7fadf4e5e8fcbd0';
