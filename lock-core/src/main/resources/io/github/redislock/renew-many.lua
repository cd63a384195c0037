-- Extends the leases of many locks in one call (the watchdog's batch), each as renew.lua does without 'exact': a
-- holding's lease is set to at least its lease, never shortened.
-- KEYS[i] the i-th lock (in Redis Cluster all in one hash slot)
-- ARGV[2i-1] the i-th lock's owner id, ARGV[2i] its lease in ms
-- Returns a string of one character per lock, in KEYS order: '1' when the owner still holds it (its TTL now at least
-- the lease), '0' when it is no longer the owner's (expired, deleted, Redis lost it).
-- On Redis 7.0 and later (which sets redis.REDIS_VERSION_NUM) PEXPIRE's GT flag does the 'never shortened' in the
-- same call; before, PTTL is asked first.
local gt = redis.REDIS_VERSION_NUM ~= nil
local held = {}
for i = 1, #KEYS do
  local lease = ARGV[2 * i]
  if redis.call('GET', KEYS[i]) == ARGV[2 * i - 1] then
    if gt then
      redis.call('PEXPIRE', KEYS[i], lease, 'GT')
    elseif redis.call('PTTL', KEYS[i]) < tonumber(lease) then
      redis.call('PEXPIRE', KEYS[i], lease)
    end
    held[i] = '1'
  else
    held[i] = '0'
  end
end
return table.concat(held)
