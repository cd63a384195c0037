-- Withdraws a client that stopped waiting (timeout, interrupt) from a lock's waiters.
-- KEYS[1] waiting clients by arrival, KEYS[2] waiting clients by expiry
-- ARGV[1] client id
-- Returns the number of entries removed.
return redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
