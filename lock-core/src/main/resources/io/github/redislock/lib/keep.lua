-- lib/keep.lua: keeping a semaphore's keys alive. Prepended like lib/fence.lua (see there) to each script whose
-- header has the line "-- Uses lib/keep.lua.".

-- The longer of two durations in ms given as script arguments, returned as the argument it is: Redis takes a string
-- as it is, where it formats a Lua number first (see lib/fence.lua).
local function longer_arg(a, b)
  if tonumber(a) >= tonumber(b) then
    return a
  end
  return b
end

-- Keeps key, and twin if given (a key whose TTL always equals key's, so one check serves both), alive for at least
-- ttl ms, a script argument; never shortens them.
local function keep_for(key, ttl, twin)
  if redis.call('PTTL', key) < tonumber(ttl) then
    redis.call('PEXPIRE', key, ttl)
    if twin then
      redis.call('PEXPIRE', twin, ttl)
    end
  end
end
