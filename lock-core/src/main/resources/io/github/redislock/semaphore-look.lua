-- Run by a client whose release of a semaphore woke the longest-waiting threads' clients but not every waiting one
-- (semaphore-release.lua), a turn's time later: when permits are still free while clients still wait, the woken ones
-- did not take them (they died or left, their entries not yet stale, or they want more than is free), so it wakes
-- every client still waiting, and a live one takes the permits now rather than at its next look (up to 5 s later).
-- KEYS[1] holders (zset: holder id -> lease end ms), KEYS[2] permits per holder (hash), KEYS[3] the permit limit,
-- KEYS[4] waiting threads by arrival, KEYS[5] waiting threads by expiry
-- ARGV[1] wake-up channel prefix, ARGV[2] the name waiting clients know the semaphore by
-- Returns 0 when there was nothing to do (no permit free, or nobody waits), else minus the number of clients woken.
-- Uses lib/waiters.lua.
if redis.call('EXISTS', KEYS[4]) == 0 then
  return 0
end
local limit = redis.call('GET', KEYS[3])
if not limit then
  return 0
end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- permits whose lease ended are free, as every other script of the semaphore counts them
for _, holder in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs)) do
  redis.call('ZREM', KEYS[1], holder)
  redis.call('HDEL', KEYS[2], holder)
end
local holding = 0
for _, permits in ipairs(redis.call('HVALS', KEYS[2])) do
  holding = holding + tonumber(permits)
end
if holding >= tonumber(limit) then
  return 0
end
prune_stale_waiters(KEYS[4], KEYS[5], nowMs)
-- at most 100 entries, so the call's cost stays bounded; one message per client reaches all its waiting threads
local told = {}
local count = 0
for _, waiter in ipairs(redis.call('ZRANGE', KEYS[4], 0, 99)) do
  local client = string.match(waiter, '^[^:]+')
  if not told[client] then
    told[client] = true
    count = count + 1
    redis.call('PUBLISH', ARGV[1] .. client, ARGV[2])
  end
end
return -count
