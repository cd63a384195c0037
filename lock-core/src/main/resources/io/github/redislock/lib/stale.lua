-- lib/stale.lua: refusing an acquisition request its client gave up on. Prepended like lib/fence.lua (see there) to
-- each script whose header has the line "-- Uses lib/stale.lua.".
-- A request can reach Redis after its client stopped waiting for the reply (the client's timeout, a stalled network,
-- a proxy holding it back): it would then take a lock, permits or a place in a queue for an owner id nobody is
-- behind any more, for up to a whole lease. So each attempt of an acquisition carries its number (1, 2, ...), and
-- the lock's abandoned set (zset: owner id -> the highest attempt of it given up) records the attempts given up: the
-- attempt after a failed one records every attempt before it, atomically with its own work, and a client that gave
-- up after a failed attempt records every attempt of its owner id (abandon.lua) before it releases what one may have
-- taken. A request so recorded changes nothing when it lands. Only a failure writes to the set; it lives
-- ABANDONED_KEEP_MS after the latest record, longer than a request can linger in a network.

local ABANDONED_KEEP_MS = 300000

-- Records that owner's attempts up to through (a number, or a script argument) are given up.
local function abandon_through(abandoned, owner, through)
  local recorded = redis.call('ZSCORE', abandoned, owner)
  if not recorded or tonumber(recorded) < tonumber(through) then
    redis.call('ZADD', abandoned, through, owner)
  end
  if redis.call('PTTL', abandoned) < ABANDONED_KEEP_MS then
    redis.call('PEXPIRE', abandoned, ABANDONED_KEEP_MS)
  end
end

-- Whether attempt number attempt (a script argument) of owner was given up; first, when after_failure is '1' (an
-- earlier attempt failed), records the attempts before it as given up.
local function given_up(abandoned, owner, attempt, after_failure)
  local number = tonumber(attempt)
  if after_failure == '1' and number > 1 then
    abandon_through(abandoned, owner, number - 1)
  end
  local recorded = redis.call('ZSCORE', abandoned, owner)
  return recorded ~= false and tonumber(recorded) >= number
end
