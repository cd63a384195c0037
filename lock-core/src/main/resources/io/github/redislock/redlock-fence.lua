-- Raises a lock's fencing counter on one Redlock node to the token a Redlock acquisition handed out (the highest
-- of its majority's tokens), so this node never hands out a lower token for the key while it remembers it.
-- KEYS[1] the fencing counter
-- ARGV[1] the token, ARGV[2] how long the counter keeps it, in ms
-- A longer TTL the counter already has is kept. Returns 1.
local token = tonumber(ARGV[1])
local memory = tonumber(ARGV[2])
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local kept = redis.call('PTTL', KEYS[1])
if last < token then
  redis.call('SET', KEYS[1], string.format('%d', token), 'PX', math.max(memory, kept))
elseif kept < memory then
  redis.call('PEXPIRE', KEYS[1], memory)
end
return 1
