package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.locks.Lock;

/** The {@link Lock} view of one key; see {@link RedisLockTemplate#lock(String)}. */
final class RedisReentrantLock extends RedisLockView {

    private final ExclusiveLock locks;
    private final LocalLocks localLocks;
    private final String key;

    RedisReentrantLock(ExclusiveLock locks, LocalLocks localLocks, String key) {
        this.locks = locks;
        this.localLocks = localLocks;
        this.key = key;
    }

    @Override
    boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
        return locks.lock(key, wait, null, interruptible) != null;
    }

    @Override
    void release() {
        LocalLock lock = localLocks.get(key);
        if (lock == null) {
            throw new IllegalMonitorStateException("Lock '" + key + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'");
        }
        locks.release(lock);
    }

    @Override
    public String toString() {
        return "RedisReentrantLock[" + key + "]";
    }
}
