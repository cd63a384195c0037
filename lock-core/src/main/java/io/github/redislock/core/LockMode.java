package io.github.redislock.core;

/**
 * Which side of a read/write lock ({@link RedisLockTemplate#readWriteLock(String)}) to take: {@link #READ} is
 * shared with other readers, {@link #WRITE} excludes readers and writers.
 */
enum LockMode {

    /** Shared with other readers, excluded by a writer. */
    READ,

    /** Exclusive of readers and writers. */
    WRITE
}
