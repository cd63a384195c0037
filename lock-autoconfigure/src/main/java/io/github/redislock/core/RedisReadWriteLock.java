package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;

/** The {@link ReadWriteLock} view of one key; see {@link RedisLockTemplate#readWriteLock(String)}. */
final class RedisReadWriteLock implements ReadWriteLock {

    private final Lock readLock;
    private final Lock writeLock;

    RedisReadWriteLock(ReadWriteLocks locks, String key) {
        this.readLock = new Side(locks, key, LockMode.READ);
        this.writeLock = new Side(locks, key, LockMode.WRITE);
    }

    @Override
    public Lock readLock() {
        return readLock;
    }

    @Override
    public Lock writeLock() {
        return writeLock;
    }

    /** One side as a {@link Lock}: watchdog-leased; {@code lock()} waits without bound and keeps waiting when interrupted. */
    private record Side(ReadWriteLocks locks, String key, LockMode mode) implements Lock {

        @Override
        public void lock() {
            try {
                locks.lock(key, mode, LockOptions.WAIT_FOREVER, null, false);
            } catch (InterruptedException e) {
                throw new IllegalStateException("unreachable: lock() does not throw on interrupt", e);
            }
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            locks.lock(key, mode, LockOptions.WAIT_FOREVER, null, true);
        }

        @Override
        public boolean tryLock() {
            try {
                return locks.lock(key, mode, Duration.ZERO, null, false) != null;
            } catch (InterruptedException e) {
                throw new IllegalStateException("unreachable: tryLock() does not wait", e);
            }
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return locks.lock(key, mode, Duration.ofNanos(Math.max(0, unit.toNanos(time))), null, true) != null;
        }

        @Override
        public void unlock() {
            locks.release(key, mode);
        }

        @Override
        public Condition newCondition() {
            throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
        }

        @Override
        public String toString() {
            return "RedisReadWriteLock." + (mode == LockMode.READ ? "ReadLock[" : "WriteLock[") + key + "]";
        }
    }
}
