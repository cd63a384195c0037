-- Extends the lease of a lock the caller still holds (the watchdog, or a thread adopting a hand-over).
-- KEYS[1] the lock
-- ARGV[1] owner id, ARGV[2] lease in ms,
-- ARGV[3] optional: 'exact' sets the lease even when shorter than the TTL left (the holder choosing its
--         own lease); without it a renewal never shortens the TTL, so a late watchdog renewal cannot cut
--         short the longer lease of the thread the lock was handed to
-- ARGV[4] optional, with 'exact': the owner id the lock is held under from now on. A watchdog renewal of
--         the old owner id still on its way (sent before) then finds the lock gone, so it cannot stretch
--         the exact lease to its own longer one: neither a thread's fixed lease nor a release's minimum hold
-- Returns 1 when the caller holds it (its TTL now at least the lease), 0 when the lock is no longer the
-- caller's (expired, deleted, Redis lost it).
-- On Redis 7.0 and later (which sets redis.REDIS_VERSION_NUM) PEXPIRE's GT flag does the 'never shortens' in the
-- same call; before, PTTL is asked first.
local gt = redis.REDIS_VERSION_NUM ~= nil
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local lease = ARGV[2]
  if ARGV[3] == 'exact' then
    if ARGV[4] then
      redis.call('SET', KEYS[1], ARGV[4], 'PX', lease)
    else
      redis.call('PEXPIRE', KEYS[1], lease)
    end
  elseif gt then
    redis.call('PEXPIRE', KEYS[1], lease, 'GT')
  elseif redis.call('PTTL', KEYS[1]) < tonumber(lease) then
    redis.call('PEXPIRE', KEYS[1], lease)
  end
  return 1
end
return 0
