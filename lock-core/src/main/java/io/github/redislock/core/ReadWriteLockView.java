package io.github.redislock.core;

import java.time.Duration;

/** The read/write lock of one key; see {@link RedisLockTemplate#readWriteLock(String)}. */
final class ReadWriteLockView implements RedisReadWriteLock {

    private final String key;
    private final RedisLock readLock;
    private final RedisLock writeLock;

    ReadWriteLockView(ReadWriteLocks locks, String key, RedisLockView.Verbs readVerbs, RedisLockView.Verbs writeVerbs) {
        this.key = key;
        this.readLock = new Side(locks, key, LockType.READ, readVerbs);
        this.writeLock = new Side(locks, key, LockType.WRITE, writeVerbs);
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public RedisLock readLock() {
        return readLock;
    }

    @Override
    public RedisLock writeLock() {
        return writeLock;
    }

    @Override
    public String toString() {
        return "RedisReadWriteLock[" + key + "]";
    }

    /** One side: watchdog-leased; {@code lock()} waits without bound and keeps waiting when interrupted. */
    private static final class Side extends RedisLockView {

        private final ReadWriteLocks locks;

        Side(ReadWriteLocks locks, String key, LockType type, Verbs verbs) {
            super(key, type, verbs);
            this.locks = locks;
        }

        @Override
        boolean acquire(Duration wait, boolean interruptible) throws InterruptedException {
            return locks.lock(key(), type(), wait, null, interruptible) != null;
        }

        @Override
        void release() {
            locks.release(key(), type());
        }

        @Override
        public String toString() {
            return "RedisReadWriteLock." + (type() == LockType.READ ? "ReadLock[" : "WriteLock[") + key() + "]";
        }
    }
}
