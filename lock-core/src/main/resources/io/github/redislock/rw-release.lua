-- Releases the caller's read share or write lock of a read/write lock, or withdraws a writer that stopped waiting,
-- and wakes every waiting client when that may let one in (readers enter together, so all are woken).
-- KEYS as in rw-read-acquire.lua: [1] writer, [2] readers, [3] read epoch token, [4] fencing counter,
-- [5] writers waiting, [6] waiting clients by arrival, [7] waiting clients by expiry
-- ARGV[1] owner id, ARGV[2] 'read', 'write' or 'leave' (a writer that gave up waiting),
-- ARGV[3] wake-up channel prefix, ARGV[4] the lock's name as clients know it
-- Returns 1 when released (or withdrawn), 0 when the caller did not hold it (its lease ended, or it was deleted;
-- nothing changes then).
-- Uses lib/waiters.lua.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

if ARGV[2] == 'write' then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
  end
  redis.call('DEL', KEYS[1])
elseif ARGV[2] == 'read' then
  local expiry = redis.call('ZSCORE', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  if not expiry or tonumber(expiry) <= nowMs then
    return 0
  end
  -- other readers still read (readers whose lease ended do not count): nobody waiting can enter yet
  if redis.call('EXISTS', KEYS[2]) == 1 then
    if redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs) == 0 or redis.call('EXISTS', KEYS[2]) == 1 then
      return 1
    end
  end
  redis.call('DEL', KEYS[3])
else
  redis.call('ZREM', KEYS[5], ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', nowMs)
  if redis.call('ZCARD', KEYS[5]) > 0 or redis.call('EXISTS', KEYS[1]) == 1 then
    return 1 -- readers blocked by waiting writers stay blocked
  end
end
if redis.call('EXISTS', KEYS[6]) == 1 then
  prune_stale_waiters(KEYS[6], KEYS[7], nowMs)
  for _, client in ipairs(redis.call('ZRANGE', KEYS[6], '0', '-1')) do
    redis.call('PUBLISH', ARGV[3] .. client, ARGV[4])
  end
end
return 1
