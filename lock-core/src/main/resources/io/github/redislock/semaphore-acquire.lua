-- Takes permits of a semaphore for one holder, or registers the caller's thread as waiting for them.
-- KEYS[1] holders (zset: holder id -> ms after which its lease has ended), KEYS[2] permits per holder (hash),
-- KEYS[3] the permit limit (string), KEYS[4] the fencing counter,
-- KEYS[5] waiting threads by arrival (zset, score = first registration ms),
-- KEYS[6] waiting threads by expiry (zset, score = ms after which the entry is stale), KEYS[7] the semaphore's
-- abandoned set (see lib/stale.lua)
-- ARGV[1] holder id (client id + thread + acquisition), ARGV[2] permits wanted, ARGV[3] lease in ms,
-- ARGV[4] the limit to start with when none is stored, ARGV[5] how long a stored limit is kept unused, in ms,
-- ARGV[6] waiter id (client id + ':' + thread), ARGV[7] how long the caller will sleep at most before re-checking,
-- in ms (0 = it will not wait), ARGV[8] fence grace in ms, ARGV[9] '1' if the caller may be registered as a waiter,
-- ARGV[10] the attempt's number in its acquisition, ARGV[11] '1' when an earlier attempt of it failed (lib/stale.lua)
-- Returns the fencing token (> 0) when the holder has its permits now, else minus how long until the earliest
-- lease among the holders ends, in ms (< 0): the latest the caller needs to look again if no release reaches it
-- (-1, changing nothing, for an attempt given up: nobody waits for its reply).
-- Holders whose lease ended are dropped first, so a crashed holder's permits come back by themselves.
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
-- Uses lib/keep.lua.
-- Uses lib/stale.lua.
if given_up(KEYS[7], ARGV[1], ARGV[10], ARGV[11]) then
  return -1
end

local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local lease = tonumber(ARGV[3])

local function token_from_clock()
  return next_fencing_token(now, KEYS[4], ARGV[8], false) -- no semaphore runs on a Redlock node
end

-- keeps the holders and their permits alive for the lease: every script writes, empties and keeps the two together,
-- so their TTLs are equal
local function keep_holders()
  keep_for(KEYS[1], ARGV[3], KEYS[2])
end

local ended = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs)
for _, holder in ipairs(ended) do
  redis.call('ZREM', KEYS[1], holder)
  redis.call('HDEL', KEYS[2], holder)
end

local limit = redis.call('GET', KEYS[3])
if limit then
  limit = tonumber(limit)
else
  limit = tonumber(ARGV[4])
  redis.call('SET', KEYS[3], ARGV[4])
end
-- the limit outlives every lease: kept for the longer of the lease and the retention
keep_for(KEYS[3], longer_arg(ARGV[3], ARGV[5]))

if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  -- our own earlier attempt succeeded but its reply was lost: keep it, with a new token (unlike acquire.lua's
  -- lock, other holders took tokens meanwhile, so the counter's last one may be theirs; the lost one reached nobody)
  redis.call('ZADD', KEYS[1], nowMs + lease, ARGV[1])
  keep_holders()
  withdraw_waiter(KEYS[5], KEYS[6], ARGV[6])
  return token_from_clock()
end

local held = 0
for _, permits in ipairs(redis.call('HVALS', KEYS[2])) do
  held = held + tonumber(permits)
end
local wanted = tonumber(ARGV[2])
if held + wanted <= limit then
  redis.call('ZADD', KEYS[1], nowMs + lease, ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  keep_holders()
  if ARGV[9] == '1' then
    withdraw_waiter(KEYS[5], KEYS[6], ARGV[6])
  end
  return token_from_clock()
end

local retry = 1000 -- nobody holds permits (the limit is below what is wanted): look again now and then
local first = redis.call('ZRANGE', KEYS[1], '0', '0', 'WITHSCORES')
if first[2] then
  retry = math.max(1, tonumber(first[2]) - nowMs)
end
local sleep = tonumber(ARGV[7])
if sleep > 0 then
  -- as in acquire.lua: the entry lives until the caller's next re-check plus a second, its arrival time is kept
  local entryTtl = math.min(sleep, retry) + 1000
  register_waiter(KEYS[5], KEYS[6], ARGV[6], nowMs, entryTtl)
end
return -retry
