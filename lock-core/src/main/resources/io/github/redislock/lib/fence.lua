-- lib/fence.lua: the fencing-token function of every script that hands out a token. Redis scripts cannot include
-- files, so LockScripts puts this text after the header comment of each script whose header has the line
-- "-- Uses lib/fence.lua." when it loads them; the script sent to Redis is whole, and its SHA covers this text.

-- The next fencing token of a lock: the server clock in microseconds, above the last token handed out for it.
-- Tokens follow the server clock, so a restart that loses the counter cannot reset them. The counter lives for
-- the fence grace (a second) after each acquisition: it only guards the next acquisition against landing in the
-- same microsecond or behind a small clock step back. A counter kept longer (a Redlock node's, kept for the fence
-- memory by redlock-fence.lua) keeps its longer TTL: a grant never shortens it.
-- now: a reply of redis.call('TIME'); counter: the lock's fencing counter key; grace: fence grace in ms, as the
-- script's argument (a string: Redis takes a string argument as it is, where it formats a Lua number first, which
-- costs about as much as the command itself); kept_longer: false when the counter cannot be one kept longer (the
-- caller knows it is not on a Redlock node), which saves reading its TTL; nil or true: it may be
local function next_fencing_token(now, counter, grace, kept_longer)
  local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = redis.call('GET', counter)
  local ttl = grace
  if last then
    last = tonumber(last)
    if token <= last then
      token = last + 1
    end
    if kept_longer ~= false then
      local kept = redis.call('PTTL', counter)
      if kept > tonumber(grace) then
        ttl = kept
      end
    end
  end
  redis.call('SET', counter, string.format('%d', token), 'PX', ttl)
  return token
end
