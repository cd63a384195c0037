package io.github.redislock.core;

import java.time.Duration;

/** The exclusive lock of one key; see {@link LockOperations#lock(String)}. */
final class RedisReentrantLock extends RedisLockView {

    private final ExclusiveLock locks;
    private final LocalLocks localLocks;

    RedisReentrantLock(ExclusiveLock locks, LocalLocks localLocks, String key, Verbs verbs) {
        super(key, LockType.EXCLUSIVE, verbs);
        this.locks = locks;
        this.localLocks = localLocks;
    }

    @Override
    boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
        return locks.lock(key(), wait, null, interruptible) != null;
    }

    @Override
    void release() {
        LocalLock lock = localLocks.get(key());
        if (lock == null) {
            throw new IllegalMonitorStateException("Lock '" + key() + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'");
        }
        locks.release(lock);
    }
}
