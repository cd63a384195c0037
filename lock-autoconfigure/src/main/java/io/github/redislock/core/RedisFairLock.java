package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/** The {@link Lock} view of one fair lock; see {@link RedisLockTemplate#fairLock(String)}. */
final class RedisFairLock implements Lock {

    private final FairLock locks;
    private final String key;

    RedisFairLock(FairLock locks, String key) {
        this.locks = locks;
        this.key = key;
    }

    @Override
    public void lock() {
        try {
            locks.lock(key, LockOptions.WAIT_FOREVER, null, false);
        } catch (InterruptedException e) {
            throw new IllegalStateException("unreachable: lock() does not throw on interrupt", e);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        locks.lock(key, LockOptions.WAIT_FOREVER, null, true);
    }

    /** Takes the lock only if it is free and nobody queues for it: unlike {@code ReentrantLock}, it never barges. */
    @Override
    public boolean tryLock() {
        try {
            return locks.lock(key, Duration.ZERO, null, false) != null;
        } catch (InterruptedException e) {
            throw new IllegalStateException("unreachable: tryLock() does not wait", e);
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        Duration wait = Duration.ofNanos(Math.max(0, unit.toNanos(time)));
        return locks.lock(key, wait, null, true) != null;
    }

    @Override
    public void unlock() {
        locks.release(key);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
    }

    @Override
    public String toString() {
        return "RedisFairLock[" + key + "]";
    }
}
