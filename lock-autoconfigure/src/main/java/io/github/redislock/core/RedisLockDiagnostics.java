package io.github.redislock.core;

/**
 * A live view of what a {@link RedisLockTemplate} holds in this JVM, for health checks, leak hunting and tests;
 * every call reads the current state. Obtain it with {@link RedisLockTemplate#diagnostics()}.
 */
public final class RedisLockDiagnostics {

    /** The lock types whose holdings the watchdog renews and the diagnostics count. */
    public enum Kind {

        /** {@link RedisLockTemplate#acquire}, {@link RedisLockTemplate#lock} and multi-key locks. */
        EXCLUSIVE,

        /** {@link RedisLockTemplate#fairLock} and {@link RedisLockTemplate#acquireFair}. */
        FAIR,

        /** The read side of {@link RedisLockTemplate#readWriteLock}. */
        READ,

        /** The write side of {@link RedisLockTemplate#readWriteLock}. */
        WRITE,

        /** Permits of a {@link RedisLockTemplate#semaphore}: one holding per acquisition, whatever its permits. */
        SEMAPHORE
    }

    private final LocalLocks locks;
    private final WakeupSubscriber subscriber;

    RedisLockDiagnostics(LocalLocks locks, WakeupSubscriber subscriber) {
        this.locks = locks;
        this.subscriber = subscriber;
    }

    /** Keys of this JVM with a holder or waiter; 0 when nothing is held or awaited. */
    public int localLockCount() {
        return locks.size();
    }

    /** Whether this client is subscribed to release notices: from its first wait until it is closed. */
    public boolean isSubscribed() {
        return subscriber.isSubscribed();
    }

    /** Locks the watchdog is renewing: held without an explicit lease, and not lost. */
    public int scheduledRenewalCount() {
        return (int) locks.all().stream().filter(LocalLock::isRenewed).count();
    }

    @Override
    public String toString() {
        return "RedisLockDiagnostics[localLocks=" + localLockCount() + ", renewals=" + scheduledRenewalCount()
                + ", subscribed=" + isSubscribed() + "]";
    }
}
