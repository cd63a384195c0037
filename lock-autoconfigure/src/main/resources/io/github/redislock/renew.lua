-- Extends the lease of a lock the caller still holds (the watchdog).
-- KEYS[1] the lock
-- ARGV[1] owner id, ARGV[2] lease in ms
-- Returns 1 when renewed, 0 when the lock is no longer the caller's (expired, deleted, Redis lost it).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
