-- Extends the leases of many locks in one call (the watchdog's batch), each as renew.lua does without 'exact': a
-- holding's TTL is set to at least the lease, never shortened.
-- KEYS[i] the i-th lock (in Redis Cluster all in one hash slot)
-- ARGV[i] the i-th lock's owner id, ARGV[#KEYS + 1] the lease in ms of them all (the watchdog batches holdings of
-- one lease)
-- Returns a string of one character per lock, in KEYS order: '1' when the owner still holds it (its TTL now at least
-- the lease), '0' when it is no longer the owner's (expired, deleted, Redis lost it).
-- On Redis 7.0 and later (which sets redis.REDIS_VERSION_NUM) PEXPIRE's GT flag does the 'never shortened' in the
-- same call; before, PTTL is asked first.
local gt = redis.REDIS_VERSION_NUM ~= nil
local n = #KEYS
local lease = ARGV[n + 1]
local leaseMs = tonumber(lease)
local held = {}
for i = 1, n do
  if redis.call('GET', KEYS[i]) == ARGV[i] then
    if gt then
      redis.call('PEXPIRE', KEYS[i], lease, 'GT')
    elseif redis.call('PTTL', KEYS[i]) < leaseMs then
      redis.call('PEXPIRE', KEYS[i], lease)
    end
    held[i] = '1'
  else
    held[i] = '0'
  end
end
return table.concat(held)
