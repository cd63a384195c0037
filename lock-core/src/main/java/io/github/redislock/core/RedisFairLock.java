package io.github.redislock.core;

import java.time.Duration;

/**
 * The fair lock of one key; see {@link RedisLockTemplate#fairLock(String)}. Unlike {@code ReentrantLock},
 * {@link #tryLock()} never barges: it takes the lock only if it is free and nobody queues for it.
 */
final class RedisFairLock extends RedisLockView {

    private final FairLock locks;

    RedisFairLock(FairLock locks, String key, Verbs verbs) {
        super(key, LockType.FAIR, verbs);
        this.locks = locks;
    }

    @Override
    boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
        return locks.lock(key(), wait, null, interruptible) != null;
    }

    @Override
    void release() {
        locks.release(key());
    }
}
