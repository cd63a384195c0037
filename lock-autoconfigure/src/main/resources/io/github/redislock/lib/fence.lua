-- lib/fence.lua: the fencing-token function of every script that hands out a token. Redis scripts cannot include
-- files, so LockScripts puts this text after the header comment of each script whose header has the line
-- "-- Uses lib/fence.lua." when it loads them; the script sent to Redis is whole, and its SHA covers this text.

-- The next fencing token of a lock: the server clock in microseconds, above the last token handed out for it.
-- Tokens follow the server clock, so a restart that loses the counter cannot reset them. The counter lives for
-- the fence grace (a second) after each acquisition: it only guards the next acquisition against landing in the
-- same microsecond or behind a small clock step back.
-- now: a reply of redis.call('TIME'); counter: the lock's fencing counter key; grace: fence grace in ms
local function next_fencing_token(now, counter, grace)
  local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = tonumber(redis.call('GET', counter) or '0')
  if token <= last then
    token = last + 1
  end
  redis.call('SET', counter, string.format('%d', token), 'PX', grace)
  return token
end
