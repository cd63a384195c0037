-- Reads a semaphore's free permits, or sets its permit limit.
-- KEYS[1] holders (zset: holder id -> lease end ms), KEYS[2] permits per holder (hash), KEYS[3] the permit limit,
-- KEYS[4] waiting threads by arrival, KEYS[5] waiting threads by expiry
-- ARGV[1] 'available' or 'set', ARGV[2] the limit to assume when none is stored ('available') or the new limit
-- ('set'), ARGV[3] how long a stored limit is kept unused, in ms,
-- ARGV[4] wake-up channel prefix, ARGV[5] the name waiting clients know the semaphore by, ARGV[6] how many to wake
-- Returns the permits free now (the limit less what live holders hold; 0 when they hold more than a lowered limit).
-- Setting the limit keeps every holder's permits: a lower limit admits nobody until enough are returned, and a
-- higher one wakes the waiters.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ended = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs)
for _, holder in ipairs(ended) do
  redis.call('ZREM', KEYS[1], holder)
  redis.call('HDEL', KEYS[2], holder)
end
local limit
if ARGV[1] == 'set' then
  limit = tonumber(ARGV[2])
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
  local told = {}
  for _, waiter in ipairs(redis.call('ZRANGE', KEYS[4], 0, tonumber(ARGV[6]) - 1)) do
    local client = string.match(waiter, '^[^:]+')
    if not told[client] then
      told[client] = true
      redis.call('PUBLISH', ARGV[4] .. client, ARGV[5])
    end
  end
else
  limit = tonumber(redis.call('GET', KEYS[3]) or ARGV[2])
end
local held = 0
for _, permits in ipairs(redis.call('HVALS', KEYS[2])) do
  held = held + tonumber(permits)
end
return math.max(0, limit - held)
