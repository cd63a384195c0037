package io.github.redislock.core;

/**
 * A lock a release script granted to a waiter, as the grant's message told it: the waiter's fencing token, and when
 * the script made the grant by the Redis server's clock, in the unit of its lock type's scripts (the fair lock: µs; the
 * exclusive lock: ms modulo {@link LockScripts#GRANT_CLOCK_MODULUS}; 0 if the message did not say). The waiter holds
 * the lock from the message only if the grant was made after its latest request that missed, which tells the same
 * clock: it then ran after that request was sent, and its short lease counts from no earlier than that.
 */
record Grant(long token, long grantedAt) {
}
