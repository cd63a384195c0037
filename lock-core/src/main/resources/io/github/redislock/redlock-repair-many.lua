-- A Redlock node's renewal put-back, for many holdings in one call: the holders' renewal found them gone from this node
-- (it restarted, from persisted data or empty, or was flushed) while their leases are still valid on a majority, and
-- puts each back where the key is free, as acquire.lua grants it (a new fencing counter from the server clock), also
-- while the node sits out its restart delay: that gives the lock to nobody new. Before the first one it keeps the
-- node's restart marker as acquire.lua does before it grants (a node that came back empty gets its delay from now),
-- so that no client takes the put-back locks for a new deployment's and the nodes for ones that forgot nothing.
-- KEYS[1] the node's restart marker, KEYS[2i] the i-th lock, KEYS[2i+1] its fencing counter
-- ARGV[1] the restart delay in ms, ARGV[2] fence grace in ms, ARGV[2i+1] the i-th lock's owner id, ARGV[2i+2] its
-- lease in ms
-- Returns a string of one character per lock: '1' when the owner holds it now (put back, or there already: its TTL
-- at least the lease), '0' when another owner holds it.
-- Uses lib/fence.lua.
-- Uses lib/restart.lua.
local now = redis.call('TIME')
local marked = false
local held = {}
for i = 1, (#KEYS - 1) / 2 do
  local lock, counter, owner, lease = KEYS[2 * i], KEYS[2 * i + 1], ARGV[2 * i + 1], ARGV[2 * i + 2]
  local current = redis.call('GET', lock)
  if not current then
    if not marked then
      restart_delay_left(KEYS[1], ARGV[1])
      marked = true
    end
    redis.call('SET', lock, owner, 'PX', lease)
    next_fencing_token(now, counter, ARGV[2])
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
