-- A Redlock node's renewal put-back, for many holdings in one call: the holders' renewal found them gone from this node
-- (it restarted, from persisted data or empty, or was flushed) while their leases are still valid on a majority, and
-- puts each back where the key is free, as acquire.lua grants it (a new fencing counter from the server clock), also
-- while the node sits out its restart delay: that gives the lock to nobody new. It leaves the restart marker alone:
-- the next acquisition reckons the delay from it, or without one from then (later, never sooner).
-- KEYS[2i-1] the i-th lock, KEYS[2i] its fencing counter
-- ARGV[1] fence grace in ms, ARGV[2i] the i-th lock's owner id, ARGV[2i+1] its lease in ms
-- Returns a string of one character per lock: '1' when the owner holds it now (put back, or there already: its TTL
-- at least the lease), '0' when another owner holds it.
-- Uses lib/fence.lua.
local now = redis.call('TIME')
local held = {}
for i = 1, #KEYS / 2 do
  local lock, counter, owner, lease = KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i], ARGV[2 * i + 1]
  local current = redis.call('GET', lock)
  if not current then
    redis.call('SET', lock, owner, 'PX', lease)
    next_fencing_token(now, counter, ARGV[1])
    held[i] = '1'
  elseif current == owner then
    if redis.call('PTTL', lock) < tonumber(lease) then
      redis.call('PEXPIRE', lock, lease)
    end
    held[i] = '1'
  else
    held[i] = '0'
  end
end
return table.concat(held)
