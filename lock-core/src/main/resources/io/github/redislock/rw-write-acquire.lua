-- Takes the write (exclusive) side of a read/write lock, or marks the caller as a waiting writer.
-- KEYS as in rw-read-acquire.lua: [1] writer, [2] readers, [3] read epoch token, [4] fencing counter,
-- [5] writers waiting, [6] waiting clients by arrival, [7] waiting clients by expiry, [8] abandoned set
-- ARGV[1] owner id, ARGV[2] lease in ms, ARGV[3] client id,
-- ARGV[4] how long the caller will sleep at most before re-checking, in ms (0 = it will not wait),
-- ARGV[5] fence grace in ms, ARGV[6] wake-up channel prefix, ARGV[7] the message telling a client that a writer
-- waits for this lock, ARGV[8] the attempt's number in its acquisition, ARGV[9] '1' when an earlier attempt of it
-- failed (lib/stale.lua)
-- Returns the fencing token (> 0) when the caller holds the write lock now, else minus how long until it should
-- look again (< 0) (-1, changing nothing, for an attempt given up: nobody waits for its reply).
-- A writer that waits enters itself in KEYS[5] until its next re-check plus a second: while it is there, no new
-- reader enters (rw-read-acquire.lua), so the readers drain and the writer gets its turn. A writer that dies
-- while waiting blocks readers at most that long. When it starts waiting, it tells every client that reads (ARGV[7],
-- one message per client): a client's threads join its read share in memory, and must stop joining it now.
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
-- Uses lib/stale.lua.
if given_up(KEYS[8], ARGV[1], ARGV[8], ARGV[9]) then
  return -1
end

local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local function new_token()
  return next_fencing_token(now, KEYS[4], ARGV[5], false) -- no read/write lock runs on a Redlock node
end

redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', nowMs)

local writer = redis.call('GET', KEYS[1])
if writer == ARGV[1] then
  -- our own earlier attempt succeeded but its reply was lost: keep it
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[5], ARGV[1])
  local last = redis.call('GET', KEYS[4])
  if last then
    return tonumber(last)
  end
  return new_token()
end
local ttl
if writer then
  ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    ttl = 1000
  end
else
  local first = redis.call('ZRANGE', KEYS[2], '0', '0', 'WITHSCORES')
  if #first == 0 then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    redis.call('ZREM', KEYS[5], ARGV[1])
    return new_token()
  end
  -- readers read: at the latest the first of their leases ends
  ttl = tonumber(first[2]) - nowMs
end
if ttl < 1 then
  ttl = 1
end
local sleep = tonumber(ARGV[4])
if sleep > 0 then
  local entryTtl = math.min(sleep, ttl) + 1000
  local added = redis.call('ZADD', KEYS[5], nowMs + entryTtl, ARGV[1])
  if redis.call('PTTL', KEYS[5]) < entryTtl then
    redis.call('PEXPIRE', KEYS[5], entryTtl)
  end
  if added == 1 then
    local told = {}
    for _, reader in ipairs(redis.call('ZRANGE', KEYS[2], '0', '-1')) do
      local client = string.match(reader, '^[^:]+')
      if not told[client] then
        told[client] = true
        redis.call('PUBLISH', ARGV[6] .. client, ARGV[7])
      end
    end
  end
  register_waiter(KEYS[6], KEYS[7], ARGV[3], nowMs, entryTtl)
end
return -ttl
