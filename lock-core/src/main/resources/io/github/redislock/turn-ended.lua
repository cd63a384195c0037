-- Run by a client whose release kept the lock for the woken clients' turn (release.lua), once the turn should have
-- ended: when none of them took the lock (they died or left, their entries not yet stale, or they were too slow),
-- wakes every client still waiting, so a live one takes the lock now rather than at its next look (up to 5 s later).
-- KEYS[1] the lock, KEYS[2] waiting clients by arrival, KEYS[3] waiting clients by expiry
-- ARGV[1] wake-up channel prefix, ARGV[2] the lock's name as clients know it, ARGV[3] (optional) how long a grant to a
-- waiting client lasts unless confirmed, in ms (release.lua): one that may still be unconfirmed is looked at again
-- Returns the turn's remaining ms while a turn still runs (a later release's: look again then), else 0 when there
-- was nothing to do (the lock was taken, or nobody waits), or minus the number of clients woken.
-- Uses lib/waiters.lua.
local current = redis.call('GET', KEYS[1])
if current == '~turn' then
  return math.max(redis.call('PTTL', KEYS[1]), 1)
end
if current and ARGV[3] and string.find(current, ':grant:', 1, true) then
  local left = redis.call('PTTL', KEYS[1])
  if left <= tonumber(ARGV[3]) then
    return math.max(left, 1)
  end
end
if current or redis.call('EXISTS', KEYS[2]) == 0 then
  return 0
end
local now = redis.call('TIME')
prune_stale_waiters(KEYS[2], KEYS[3], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
-- no turn this time: whoever of them is alive takes the lock first (at most 100, so the call's cost stays bounded)
local waiting = redis.call('ZRANGE', KEYS[2], '0', '99')
for _, client in ipairs(waiting) do
  redis.call('PUBLISH', ARGV[1] .. client, ARGV[2])
end
return -#waiting
