package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/** The {@link Lock} view of one key; see {@link RedisLockTemplate#lock(String)}. */
final class RedisReentrantLock implements Lock {

    private final ExclusiveLock locks;
    private final LocalLocks localLocks;
    private final String key;

    RedisReentrantLock(ExclusiveLock locks, LocalLocks localLocks, String key) {
        this.locks = locks;
        this.localLocks = localLocks;
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
        locks.lock(key, LockOptions.WAIT_FOREVER, null, true);
    }

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
        LocalLock lock = localLocks.get(key);
        if (lock == null) {
            throw new IllegalMonitorStateException("Lock '" + key + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'");
        }
        locks.release(lock);
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
    }

    @Override
    public String toString() {
        return "RedisReentrantLock[" + key + "]";
    }
}
