-- Extends the lease of a read share or write lock the caller still holds (the watchdog).
-- KEYS as in rw-read-acquire.lua: [1] writer, [2] readers, [3] read epoch token
-- ARGV[1] owner id, ARGV[2] 'read' or 'write', ARGV[3] lease in ms
-- KEYS[5] writers waiting
-- Returns 1 when the caller holds it (its lease now at least ARGV[3]), 0 when it no longer does; 2 when it holds a
-- read share and a writer waits (a client then stops letting its threads join that share). A renewal never
-- shortens a lease.
-- On Redis 7.0 and later (which sets redis.REDIS_VERSION_NUM) PEXPIRE's GT flag does the 'never shortens' in the
-- same call; before, PTTL is asked first.
local gt = redis.REDIS_VERSION_NUM ~= nil
local lease = tonumber(ARGV[3])
if ARGV[2] == 'write' then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
  end
  if gt then
    redis.call('PEXPIRE', KEYS[1], ARGV[3], 'GT')
  elseif redis.call('PTTL', KEYS[1]) < lease then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
  end
  return 1
end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not expiry or tonumber(expiry) <= nowMs then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 0
end
if tonumber(expiry) < nowMs + lease then
  redis.call('ZADD', KEYS[2], 'XX', nowMs + lease, ARGV[1])
end
-- the readers and the epoch live as long as the longest reader lease
for i = 2, 3 do
  if gt then
    redis.call('PEXPIRE', KEYS[i], ARGV[3], 'GT')
  elseif redis.call('PTTL', KEYS[i]) < lease then
    redis.call('PEXPIRE', KEYS[i], ARGV[3])
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', nowMs)
if redis.call('ZCARD', KEYS[5]) > 0 then
  return 2
end
return 1
