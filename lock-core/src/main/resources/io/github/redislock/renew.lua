-- Extends the lease of a lock the caller still holds (the watchdog, or a thread adopting a hand-over).
-- KEYS[1] the lock
-- ARGV[1] owner id, ARGV[2] lease in ms,
-- ARGV[3] optional: 'exact' sets the lease even when shorter than the TTL left (the holder choosing its
--         own lease); without it a renewal never shortens the TTL, so a late watchdog renewal cannot cut
--         short the longer lease of the thread the lock was handed to (PTTL rather than PEXPIRE GT: Redis 6 too)
-- Returns 1 when the caller holds it (its TTL now at least the lease), 0 when the lock is no longer the
-- caller's (expired, deleted, Redis lost it).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  local lease = tonumber(ARGV[2])
  if ARGV[3] == 'exact' or redis.call('PTTL', KEYS[1]) < lease then
    redis.call('PEXPIRE', KEYS[1], lease)
  end
  return 1
end
return 0
