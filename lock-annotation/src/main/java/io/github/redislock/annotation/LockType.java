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

    /**
     * Shared with other readers, exclusive of writers: the read side of {@code RedisLockTemplate.readWriteLock(key)}.
     * The fencing token is that of the read epoch (shared by the readers reading together, below any later writer's).
     */
    READ,

    /**
     * Exclusive of readers and writers: the write side of {@code RedisLockTemplate.readWriteLock(key)}. A waiting
     * writer keeps new readers out. Called from inside a {@link #READ} method on the same key it fails at once with
     * {@code IllegalMonitorStateException} (upgrading is not supported); the other way round is fine (downgrade).
     */
    WRITE
}
