package io.github.redislock.annotation;

/** Kinds of lock. */
public enum LockType {

    /** Exclusive and reentrant. */
    EXCLUSIVE,

    /**
     * First come, first served across threads and JVMs, by arrival in Redis; a release hands the lock straight to
     * the next waiter. Takes one key. See {@code RedisLockTemplate.fairLock}.
     */
    FAIR,

    /** Shared with other readers, exclusive of writers. Not available yet: using it fails at start-up. */
    READ,

    /** Exclusive of readers and writers. Not available yet: using it fails at start-up. */
    WRITE
}
