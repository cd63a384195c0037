package io.github.redislock.core;

import java.util.Locale;

/**
 * The kinds of distributed lock, one name for each everywhere: {@code @DistributedLock(type = ...)}, the events
 * observers see ({@link LockObserver.LockEvent#type()}), what {@link RedisLockDiagnostics} lists and the
 * {@code type} tag of the {@code redis.lock.*} metrics ({@link #tag()}).
 */
public enum LockType {

    /** Exclusive and reentrant: {@link LockOperations#lock(String)}, {@link LockOperations#acquire} and multi-key locks. */
    EXCLUSIVE,

    /**
     * First come, first served across threads and JVMs, by arrival in Redis; a release hands the lock straight to
     * the next waiter: {@link RedisLockTemplate#fairLock(String)}. Shares the Redis lock of {@link #EXCLUSIVE}.
     */
    FAIR,

    /**
     * Shared with other readers, exclusive of writers: the read side of {@link RedisLockTemplate#readWriteLock(String)}.
     * Its fencing token is the read epoch's (shared by the readers reading together, below any later writer's).
     */
    READ,

    /**
     * Exclusive of readers and writers: the write side of {@link RedisLockTemplate#readWriteLock(String)}. A waiting
     * writer keeps new readers out; a reader asking for it fails at once with {@code IllegalMonitorStateException}
     * (no upgrade); a writer may take the read lock (downgrade).
     */
    WRITE,

    /** Permits of a counting semaphore: {@link RedisLockTemplate#semaphore(String, int)}; one holding per acquisition. */
    SEMAPHORE;

    /** The type as a metric tag and in text: {@code exclusive}, {@code fair}, {@code read}, {@code write}, {@code semaphore}. */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
