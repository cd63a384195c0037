package io.github.redislock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A live view of what a {@link RedisLockTemplate} holds in this JVM, for health checks, leak hunting and tests;
 * every call reads the current state and counts every lock type: exclusive, fair, read/write and semaphore.
 * Obtain it with {@link RedisLockTemplate#diagnostics()}.
 */
public final class RedisLockDiagnostics {

    private final Watchdog watchdog;
    private final WakeupSubscriber subscriber;
    private final Supplier<Stream<String>> waitedFor;
    private final LockActivity activity;

    /**
     * @param waitedFor the locks threads of this client wait for, each named by {@link #inUse}
     * @param activity the acquisitions through the template's API, held and waiting
     */
    RedisLockDiagnostics(Watchdog watchdog, WakeupSubscriber subscriber, Supplier<Stream<String>> waitedFor,
            LockActivity activity) {
        this.watchdog = watchdog;
        this.subscriber = subscriber;
        this.waitedFor = waitedFor;
        this.activity = activity;
    }

    /**
     * One lock held through the template's API or {@code @DistributedLock} now (the {@code Lock} views are not
     * listed); a nested acquisition of the same lock is an entry of its own.
     *
     * @param name the call's metric name ({@value LockObserver#UNNAMED} when it gave none)
     * @param type the kind of lock
     * @param leaseLeft how long the lease has left as this JVM counts it (before the safety margin); {@code null}
     *        when not known
     * @param renewing whether the watchdog renews it
     * @param renewalOverdue for a renewed lock, how long ago its next renewal was due (a third of the lease after the
     *        last successful one) without one succeeding since; zero while renewals succeed
     * @param heldUntil for a lock its holder released before its minimum hold ({@code holdAtLeast}) ended: when Redis
     *        lets it go (its lease then ends at the same time, and {@code thread} is the thread that held it);
     *        {@code null} while its holder holds it
     */
    public record HeldLock(String key, String name, LockType type, long fencingToken, Instant heldSince,
            @Nullable Duration leaseLeft, boolean renewing, String thread, Duration renewalOverdue,
            @Nullable Instant heldUntil) {

        /** A lock its holder holds now. */
        public HeldLock(String key, String name, LockType type, long fencingToken, Instant heldSince,
                @Nullable Duration leaseLeft, boolean renewing, String thread, Duration renewalOverdue) {
            this(key, name, type, fencingToken, heldSince, leaseLeft, renewing, thread, renewalOverdue, null);
        }
    }

    /** One acquisition waiting for its lock now, since when, on which thread. */
    public record Waiter(String key, String name, LockType type, Instant since, String thread) {
    }

    /**
     * The locks held now through the template's API or {@code @DistributedLock}, oldest first; a lock released before
     * its {@code holdAtLeast} ended is listed (with {@link HeldLock#heldUntil()}) until Redis lets it go.
     */
    public List<HeldLock> heldLocks() {
        return activity.held();
    }

    /** The acquisitions of this client waiting for a lock now (through the template's API), oldest first. */
    public List<Waiter> waiters() {
        return activity.waiters();
    }

    /** How {@link #localLockCount} tells locks apart: the two sides of a read/write lock are one lock. */
    static String inUse(LockType kind, String key) {
        LockType lock = kind == LockType.WRITE ? LockType.READ : kind;
        return lock.name() + '\u0000' + key;
    }

    /**
     * Locks of this JVM with a holder or a waiting thread, of every type; 0 when nothing is held or awaited. A key
     * counts once per lock type (the read and write sides of one key are one read/write lock), however many threads
     * hold or wait for it.
     */
    public int localLockCount() {
        Set<String> locks = new HashSet<>();
        waitedFor.get().forEach(locks::add);
        watchdog.forEachHolding((lock, renewer) -> {
            if (lock.holding != null) {
                locks.add(inUse(renewer.kind(), lock.key));
            }
        });
        return locks.size();
    }

    /** Whether this client is subscribed to release notices: from its first wait until it is closed. */
    public boolean isSubscribed() {
        return subscriber.isSubscribed();
    }

    /**
     * Holdings in Redis of every type that this client holds now, as {@link LockHandle#isHeld()} sees them (not
     * released, not lost, lease not run out): one per exclusive or fair lock, per reading or writing thread of a
     * read/write lock, and per semaphore acquisition. Nested acquisitions share their outer one's holding.
     */
    public int heldLockCount() {
        int[] held = {0};
        watchdog.forEachHolding((lock, renewer) -> {
            if (lock.holding != null && lock.isValid()) {
                held[0]++;
            }
        });
        return held[0];
    }

    /** Like {@link #heldLockCount()}, for one lock type. */
    public int heldLockCount(LockType type) {
        int[] held = {0};
        watchdog.forEachHolding((lock, renewer) -> {
            if (renewer.kind() == type && lock.holding != null && lock.isValid()) {
                held[0]++;
            }
        });
        return held[0];
    }

    /** Holdings of every type the watchdog is renewing: held without an explicit lease, and not lost. */
    public int scheduledRenewalCount() {
        int[] renewed = {0};
        watchdog.forEachHolding((lock, renewer) -> {
            if (lock.isRenewed()) {
                renewed[0]++;
            }
        });
        return renewed[0];
    }

    @Override
    public String toString() {
        StringBuilder held = new StringBuilder();
        for (LockType type : LockType.values()) {
            held.append(held.isEmpty() ? "" : ", ").append(type.tag()).append('=').append(heldLockCount(type));
        }
        return "RedisLockDiagnostics[localLocks=" + localLockCount() + ", held={" + held + "}, renewals="
                + scheduledRenewalCount() + ", subscribed=" + isSubscribed() + "]";
    }
}
