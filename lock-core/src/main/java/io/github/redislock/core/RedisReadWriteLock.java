package io.github.redislock.core;

import java.time.Duration;
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
    private static final class Side extends RedisLockView {

        private final ReadWriteLocks locks;
        private final String key;
        private final LockMode mode;

        Side(ReadWriteLocks locks, String key, LockMode mode) {
            this.locks = locks;
            this.key = key;
            this.mode = mode;
        }

        @Override
        boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
            return locks.lock(key, mode, wait, null, interruptible) != null;
        }

        @Override
        void release() {
            locks.release(key, mode);
        }

        @Override
        public String toString() {
            return "RedisReadWriteLock." + (mode == LockMode.READ ? "ReadLock[" : "WriteLock[") + key + "]";
        }
    }
}
