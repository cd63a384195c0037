package io.github.redislock.core;

/** Takes a lock of any {@link LockType} in one call, for tests run for every type. */
final class LockTypes {

    private LockTypes() {
    }

    /** {@code key}'s lock of {@code type} (a semaphore of one permit), as {@link RedisLock#acquire} takes it. */
    static LockHandle acquire(RedisLockTemplate locks, LockType type, String key, LockOptions options) {
        return switch (type) {
            case EXCLUSIVE -> locks.acquire(key, options);
            case FAIR -> locks.fairLock(key).acquire(options);
            case READ -> locks.readWriteLock(key).readLock().acquire(options);
            case WRITE -> locks.readWriteLock(key).writeLock().acquire(options);
            case SEMAPHORE -> locks.semaphore(key, 1).acquire(options);
        };
    }
}
