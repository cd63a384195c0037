package io.github.redislock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A live view of what a {@link RedisLockTemplate} holds in this JVM, for health checks, leak hunting and tests;
 * every call reads the current state. Obtain it with {@link RedisLockTemplate#diagnostics()}.
 */
public final class RedisLockDiagnostics {

    private final LocalLocks locks;
    private final WakeupSubscriber subscriber;
    private final LockActivity activity;

    RedisLockDiagnostics(LocalLocks locks, WakeupSubscriber subscriber, LockActivity activity) {
        this.locks = locks;
        this.subscriber = subscriber;
        this.activity = activity;
    }

    /**
     * One lock held through the template's API or {@code @DistributedLock} now (the {@code Lock} views are not
     * listed); a nested acquisition of the same lock is an entry of its own.
     *
     * @param name the call's metric name ({@value LockObserver#UNNAMED} when it gave none)
     * @param type {@code exclusive}, {@code fair}, {@code read}, {@code write} or {@code semaphore}
     * @param leaseLeft how long the lease has left as this JVM counts it (before the safety margin); {@code null}
     *        when not known
     * @param renewing whether the watchdog renews it
     * @param renewalOverdue for a renewed lock, how long ago its next renewal was due (a third of the lease after the
     *        last successful one) without one succeeding since; zero while renewals succeed
     */
    public record HeldLock(String key, String name, String type, long fencingToken, Instant heldSince,
            Duration leaseLeft, boolean renewing, String thread, Duration renewalOverdue) {
    }

    /** One acquisition waiting for its lock now, since when, on which thread. */
    public record Waiter(String key, String name, String type, Instant since, String thread) {
    }

    /** The locks held now through the template's API or {@code @DistributedLock}, oldest first. */
    public List<HeldLock> heldLocks() {
        return activity.held();
    }

    /** The acquisitions of this client waiting for a lock now, oldest first. */
    public List<Waiter> waiters() {
        return activity.waiters();
    }

    /** How many locks {@link #heldLocks()} lists, counted without building the list. */
    public int heldLockCount() {
        return activity.heldCount();
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
