package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.locks.Lock;

/**
 * The {@link Lock} view of one fair lock; see {@link RedisLockTemplate#fairLock(String)}. Unlike
 * {@code ReentrantLock}, {@link #tryLock()} never barges: it takes the lock only if it is free and nobody queues
 * for it.
 */
final class RedisFairLock extends RedisLockView {

    private final FairLock locks;
    private final String key;

    RedisFairLock(FairLock locks, String key) {
        this.locks = locks;
        this.key = key;
    }

    @Override
    boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
        return locks.lock(key, wait, null, interruptible) != null;
    }

    @Override
    void release() {
        locks.release(key);
    }

    @Override
    public String toString() {
        return "RedisFairLock[" + key + "]";
    }
}
