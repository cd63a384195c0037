-- Extends the lease of a semaphore holder's permits (the watchdog); never shortens it.
-- KEYS[1] holders (zset: holder id -> lease end ms), KEYS[2] permits per holder (hash), KEYS[3] the permit limit
-- ARGV[1] holder id, ARGV[2] lease in ms, ARGV[3] how long a stored limit is kept unused, in ms
-- Returns 1 when the holder still has its permits (its lease now at least ARGV[2]), 0 when not (its lease ended,
-- or Redis lost them).
-- On Redis 7.0 and later (which sets redis.REDIS_VERSION_NUM) PEXPIRE's GT flag does the 'never shortens' in the
-- same call; before, PTTL is asked first.
-- Uses lib/keep.lua.
local gt = redis.REDIS_VERSION_NUM ~= nil
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry or tonumber(expiry) <= nowMs then
  return 0
end
local lease = tonumber(ARGV[2])
if tonumber(expiry) < nowMs + lease then
  redis.call('ZADD', KEYS[1], nowMs + lease, ARGV[1])
end
for i = 1, 2 do
  if gt then
    redis.call('PEXPIRE', KEYS[i], ARGV[2], 'GT')
  else
    keep_for(KEYS[i], ARGV[2])
  end
end
local keep = longer_arg(ARGV[2], ARGV[3])
if gt then
  redis.call('PEXPIRE', KEYS[3], keep, 'GT')
else
  keep_for(KEYS[3], keep)
end
return 1
