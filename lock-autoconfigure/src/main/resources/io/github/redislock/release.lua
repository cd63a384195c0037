-- Releases a lock held by the caller and wakes the clients that have waited longest for it.
-- KEYS[1] the lock, KEYS[2] the fencing counter (untouched: it expires on its own), KEYS[3] waiting clients by arrival,
-- KEYS[4] waiting clients by expiry
-- ARGV[1] owner id, ARGV[2] wake-up channel prefix, ARGV[3] the lock's name as clients know it,
-- ARGV[4] how many waiting clients to wake
-- Returns 1 when released, 0 when the caller did not hold the lock (expired or taken over); nothing changes then.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[4]) == 1 then
  local now = redis.call('TIME')
  local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local stale = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', nowMs, 'LIMIT', 0, 100)
  for _, client in ipairs(stale) do
    redis.call('ZREM', KEYS[3], client)
    redis.call('ZREM', KEYS[4], client)
  end
  -- the next contenders, not every waiter: threads queue in their own JVM, and the longest-waiting
  -- clients go first (more than one, so a client that just left or died cannot stall the hand-off)
  for _, client in ipairs(redis.call('ZRANGE', KEYS[3], 0, tonumber(ARGV[4]) - 1)) do
    redis.call('PUBLISH', ARGV[2] .. client, ARGV[3])
  end
end
return 1
