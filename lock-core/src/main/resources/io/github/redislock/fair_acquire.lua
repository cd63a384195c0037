-- Takes a fair lock for the caller when it is its turn, or queues the caller (one entry per waiting thread).
-- KEYS[1] the lock (string: owner id; the same key as the exclusive lock's, so the two exclude each other),
-- KEYS[2] the fencing counter, KEYS[3] the queue (zset: waiter id by arrival, score = server time in us, strictly
-- increasing), KEYS[4] the waiters' expiries (zset, score = ms after which the entry is stale), KEYS[5] the lock's
-- abandoned set (see lib/stale.lua)
-- ARGV[1] owner id (client id:thread:acquisition; also the waiter id), ARGV[2] lease in ms,
-- ARGV[3] '1' if the caller waits (queue it, refresh its entry), '0' for a single try, 'confirm' when the caller took
-- the lock from the hand-over message (give it its full lease if it is still its own; never queue or take it),
-- ARGV[4] how long a waiter's entry lives without a refresh, in ms, ARGV[5] fence grace in ms,
-- ARGV[6] the attempt's number in its acquisition, ARGV[7] '1' when an earlier attempt of it failed (lib/stale.lua)
-- Returns the fencing token (> 0) when the caller holds the lock, else minus the server time of this call in us
-- (< 0): a hand-over to the caller that fair_release.lua ran at or before that time was over by then (expired, or
-- never made), so the caller holds only on a hand-over message that ran later (its server time is in the message);
-- for 'confirm', 1 when the lock is still the caller's, else 0; -1, changing nothing, for an attempt given up
-- (nobody waits for its reply).
-- A release hands the lock to the head of the queue (fair_release.lua); the head also takes a lock it finds
-- free (its holder crashed, or the waiter it was handed to never confirmed), nobody else does while a live
-- waiter queues before them. Entries not refreshed in time (their thread or JVM died) are dropped here and
-- at release, so a dead waiter holds up the queue for at most its entry's life.
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
-- Uses lib/stale.lua.
if ARGV[3] == 'confirm' then
  withdraw_waiter(KEYS[3], KEYS[4], ARGV[1])
  if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
  end
  return 0
end

if given_up(KEYS[5], ARGV[1], ARGV[6], ARGV[7]) then
  return -1
end

local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

local function token_from_clock()
  return next_fencing_token(now, KEYS[2], ARGV[5], false) -- no fair lock runs on a Redlock node
end

-- no queue (nobody waits): nothing to prune, withdraw or queue behind
local queued = redis.call('EXISTS', KEYS[3]) == 1
if queued then
  prune_stale_waiters(KEYS[3], KEYS[4], nowMs)
end

local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  -- a release handed it to the caller (or the caller's earlier reply was lost): confirm it with the full lease
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if queued then
    withdraw_waiter(KEYS[3], KEYS[4], ARGV[1])
  end
  local last = redis.call('GET', KEYS[2])
  if last then
    return tonumber(last)
  end
  return token_from_clock()
end
if not current then
  local head = {}
  if queued then
    head = redis.call('ZRANGE', KEYS[3], '0', '0')
  end
  if #head == 0 or head[1] == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    if queued then
      withdraw_waiter(KEYS[3], KEYS[4], ARGV[1])
    end
    return token_from_clock()
  end
end
if ARGV[3] == '1' then
  if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
    local arrival = tonumber(now[1]) * 1000000 + tonumber(now[2])
    local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
    if #last > 0 and tonumber(last[2]) >= arrival then
      arrival = tonumber(last[2]) + 1
    end
    redis.call('ZADD', KEYS[3], arrival, ARGV[1])
  end
  local entryTtl = tonumber(ARGV[4])
  redis.call('ZADD', KEYS[4], nowMs + entryTtl, ARGV[1])
  -- the queue lives while any waiter refreshes it
  redis.call('PEXPIRE', KEYS[3], entryTtl * 2)
  redis.call('PEXPIRE', KEYS[4], entryTtl * 2)
end
return -(tonumber(now[1]) * 1000000 + tonumber(now[2]))
