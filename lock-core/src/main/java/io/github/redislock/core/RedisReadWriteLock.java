package io.github.redislock.core;

import java.util.concurrent.locks.ReadWriteLock;

/**
 * The read/write lock of one key: many readers or one writer, across threads and JVMs; see
 * {@link RedisLockTemplate#readWriteLock(String)}. Both sides are {@link RedisLock}s of their own type
 * ({@link LockType#READ}, {@link LockType#WRITE}).
 */
public interface RedisReadWriteLock extends ReadWriteLock {

    /** The key as the caller gave it. */
    String key();

    @Override
    RedisLock readLock();

    @Override
    RedisLock writeLock();
}
