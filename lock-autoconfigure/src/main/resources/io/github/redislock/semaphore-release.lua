-- Returns a holder's permits to a semaphore and wakes the threads that have waited longest for permits.
-- KEYS[1] holders (zset: holder id -> lease end ms), KEYS[2] permits per holder (hash),
-- KEYS[3] waiting threads by arrival, KEYS[4] waiting threads by expiry
-- ARGV[1] holder id, ARGV[2] wake-up channel prefix, ARGV[3] the name waiting clients know the semaphore by,
-- ARGV[4] how many waiting threads to wake
-- Returns 1 when the holder's permits were returned, 0 when it held none any more (its lease had ended, or
-- Redis lost them); the waiters are woken either way, since permits may be free now.
-- Uses lib/waiters.lua.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
local held = 0
if expiry and tonumber(expiry) > nowMs then
  held = 1
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
local ended = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs)
for _, holder in ipairs(ended) do
  redis.call('ZREM', KEYS[1], holder)
  redis.call('HDEL', KEYS[2], holder)
end

prune_stale_waiters(KEYS[3], KEYS[4], nowMs)
-- a waiter id is '<client id>:<thread>': one message per client reaches all its waiting threads
local told = {}
for _, waiter in ipairs(redis.call('ZRANGE', KEYS[3], 0, tonumber(ARGV[4]) - 1)) do
  local client = string.match(waiter, '^[^:]+')
  if not told[client] then
    told[client] = true
    redis.call('PUBLISH', ARGV[2] .. client, ARGV[3])
  end
end
return held
