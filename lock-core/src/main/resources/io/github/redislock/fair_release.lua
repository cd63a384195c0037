-- Releases a fair lock and hands it straight to the next live waiter in the queue; or withdraws a waiter that
-- gave up, handing on the lock if it had been handed to that waiter meanwhile.
-- KEYS[1] the lock, KEYS[2] the fencing counter, KEYS[3] the queue, KEYS[4] the waiters' expiries (see fair_acquire.lua),
-- KEYS[5] the exclusive lock's waiting clients by arrival, KEYS[6] by expiry (see acquire.lua)
-- ARGV[1] owner id, ARGV[2] wake-up channel prefix, ARGV[3] the message telling a waiter it was handed the lock
-- (prefix; the waiter id, the waiter's fencing token and the server time of the hand-over in us are appended, each
-- after the prefix again), ARGV[4] how long the next waiter has to confirm the hand-over, in ms,
-- ARGV[5] fence grace in ms, ARGV[6] 'leave' when the caller is a waiter giving up rather than the holder,
-- ARGV[7] the lock's name as clients know it, ARGV[8] how many waiting clients of the exclusive lock to wake
-- When no fair waiter queues, the lock is freed and the clients waiting for the exclusive lock on the same key
-- are woken as an exclusive release wakes them (the two types share the lock key): the longest-waiting ARGV[8].
-- Those may have died or left (their entries live on until they go stale): when more clients wait, the caller
-- looks a turn's time later whether the key was taken, and if not wakes every client still waiting
-- (turn-ended.lua), so a dead client does not strand a live one until its next look.
-- Returns 1 when released (or, for 'leave', withdrawn), 2 when released and the exclusive lock's waiting clients
-- were not all woken, 0 when the caller did not hold the lock (nothing changes), or the next holder's fencing token
-- (a server-clock value, far above 2) when handed over.
-- The next holder's lease is short until it confirms (fair_acquire.lua, on the wake-up this script publishes to
-- its client): a waiter that died after its last refresh holds the lock for that long at most, then the key
-- expires and, once the dead waiter's entry has gone stale too, the next waiter's refresh takes it.
-- Uses lib/fence.lua.
-- Uses lib/waiters.lua.
if ARGV[6] == 'leave' then
  withdraw_waiter(KEYS[3], KEYS[4], ARGV[1])
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  if ARGV[6] == 'leave' then
    return 1
  end
  return 0
end
-- the server clock, read only when someone waits (a release nobody waits for needs none)
local now, nowMs
local function read_clock()
  now = redis.call('TIME')
  nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
local head = {}
-- no queue (nobody waits): nothing to withdraw, prune or hand over
if redis.call('EXISTS', KEYS[3]) == 1 then
  read_clock()
  -- a holder that took the lock from the hand-over message may not have confirmed it yet: it waits no more
  withdraw_waiter(KEYS[3], KEYS[4], ARGV[1])
  prune_stale_waiters(KEYS[3], KEYS[4], nowMs)
  head = redis.call('ZRANGE', KEYS[3], '0', '0')
end
if #head == 0 then
  redis.call('DEL', KEYS[1])
  if redis.call('EXISTS', KEYS[5]) == 1 then
    if not now then
      read_clock()
    end
    prune_stale_waiters(KEYS[5], KEYS[6], nowMs)
    local woken = tonumber(ARGV[8])
    for _, client in ipairs(redis.call('ZRANGE', KEYS[5], 0, woken - 1)) do
      redis.call('PUBLISH', ARGV[2] .. client, ARGV[7])
    end
    if redis.call('ZCARD', KEYS[5]) > woken then
      return 2
    end
  end
  return 1
end
-- the next waiter stays at the head of the queue until it confirms: if it is slow rather than dead, its refreshes
-- keep its place, and it takes the lock again should the hand-over expire first
local nextOwner = head[1]
redis.call('SET', KEYS[1], nextOwner, 'PX', ARGV[4])
local token = next_fencing_token(now, KEYS[2], ARGV[5], false) -- no fair lock runs on a Redlock node
-- a waiter id starts with its client's id, which names the client's wake-up channel
local client = string.match(nextOwner, '^[^:]+')
-- the message carries the grant, so the waiter can hold the lock without asking again (it confirms in the background),
-- and when it was made, so the waiter holds only if it was made after the waiter's latest refresh that missed: a
-- message that reaches it late (its JVM stalled) may be of a grant that expired and that the next waiter took over
local grantedAt = tonumber(now[1]) * 1000000 + tonumber(now[2])
redis.call('PUBLISH', ARGV[2] .. client, ARGV[3] .. nextOwner .. ARGV[3] .. string.format('%d', token)
  .. ARGV[3] .. string.format('%d', grantedAt))
return token
