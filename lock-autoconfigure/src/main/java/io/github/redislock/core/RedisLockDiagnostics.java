package io.github.redislock.core;

/**
 * A live view of what a {@link RedisLockTemplate} holds in this JVM, for health checks, leak hunting and tests;
 * every call reads the current state. Obtain it with {@link RedisLockTemplate#diagnostics()}.
 */
public final class RedisLockDiagnostics {

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
