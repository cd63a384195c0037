-- Takes a read (shared) share of a read/write lock, or registers the caller as a waiter.
-- KEYS (every read/write script takes the first seven, an acquisition the eighth too): [1] the writer (string: owner
-- id), [2] the readers (zset: owner id -> lease end in server ms), [3] the read epoch's fencing token, [4] the fencing
-- counter,
-- [5] writers waiting (zset: owner id -> ms after which the entry is stale), [6] waiting clients by arrival,
-- [7] waiting clients by expiry, [8] the lock's abandoned set (see lib/stale.lua)
-- ARGV[1] owner id (client id + ':share:' + acquisition for a client's read share, client id + thread + acquisition
-- for a reader of its own), ARGV[2] lease in ms, ARGV[3] client id,
-- ARGV[4] how long the caller will sleep at most before re-checking, in ms (0 = it will not wait),
-- ARGV[5] fence grace in ms, ARGV[6] the owner id of the caller's own write lock when it downgrades, else '',
-- ARGV[7] the attempt's number in its acquisition, ARGV[8] '1' when an earlier attempt of it failed (lib/stale.lua)
-- Returns the read epoch's fencing token (> 0) when the caller reads now, else minus how long until it should
-- look again (< 0) (-1, changing nothing, for an attempt given up: nobody waits for its reply).
-- Each reader entry (a client's read share, which its reading threads join in memory, or a reader of its own) has
-- its own lease, so a client that crashed frees only its own share when its lease ends.
-- A reader may enter while other readers read and no writer holds the lock or waits for it (a waiting writer
-- blocks new readers, so a stream of readers cannot starve it); the writer itself may always read (downgrade).
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
-- Uses lib/stale.lua.
if given_up(KEYS[8], ARGV[1], ARGV[7], ARGV[8]) then
  return -1
end

local lease = tonumber(ARGV[2])
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local function new_token()
  return next_fencing_token(now, KEYS[4], ARGV[5], false) -- no read/write lock runs on a Redlock node
end

local function enter()
  local epoch
  if redis.call('ZCARD', KEYS[2]) == 0 then
    -- the first reader opens a read epoch with a new token; readers joining it share that token
    epoch = new_token()
  else
    epoch = tonumber(redis.call('GET', KEYS[3]) or '0')
    if epoch == 0 then
      epoch = new_token()
    end
  end
  redis.call('ZADD', KEYS[2], nowMs + lease, ARGV[1])
  -- the epoch's token lives as long as the readers (the longest reader lease)
  local kept = redis.call('PTTL', KEYS[2])
  if kept < lease then
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
    kept = ARGV[2]
  end
  redis.call('SET', KEYS[3], string.format('%d', epoch), 'PX', kept)
  return epoch
end

-- readers whose lease ended (crashed, or cut off from Redis) no longer count; nor do writers that stopped waiting
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', nowMs)

if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return enter() -- our own earlier attempt succeeded but its reply was lost: keep it
end
local ttl
local writer = redis.call('GET', KEYS[1])
if writer then
  if writer == ARGV[6] then
    return enter()
  end
  ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    ttl = 1000 -- no expiry: not set by this library; re-check now and then
  end
else
  local waiting = redis.call('ZRANGE', KEYS[5], '0', '0', 'WITHSCORES')
  if #waiting == 0 then
    return enter()
  end
  -- a writer waits: at the latest its entry runs out (it died or left without withdrawing)
  ttl = tonumber(waiting[2]) - nowMs
end
if ttl < 1 then
  ttl = 1
end
local sleep = tonumber(ARGV[4])
if sleep > 0 then
  -- as acquire.lua: the client's entry lives until its next re-check plus a second; releases wake every waiting client
  local entryTtl = math.min(sleep, ttl) + 1000
  register_waiter(KEYS[6], KEYS[7], ARGV[3], nowMs, entryTtl)
end
return -ttl
