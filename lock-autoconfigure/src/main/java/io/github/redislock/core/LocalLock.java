package io.github.redislock.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-JVM side of one key: threads of this JVM queue on {@link #mutex}, so Redis sees one
 * contender per JVM, and reentrant acquisitions never reach Redis. It also remembers the Redis
 * holding of the thread that owns the mutex.
 */
final class LocalLock {

    final String key;
    final ReentrantLock mutex = new ReentrantLock(true);

    /** Threads holding or waiting for this key; guarded by the template's map, which drops it at zero. */
    int users;

    // The Redis holding: written by the holder thread and, for the holding it read, the watchdog; the
    // writes are synchronized so the watchdog never marks or extends a later holding than the one it renewed.
    volatile String owner;
    volatile long token;
    volatile long leaseNanos;
    volatile long expiresAtNanos;
    volatile String lostReason;
    /** Whether the watchdog renews this holding (no explicit lease). */
    volatile boolean renewing;
    /**
     * Whether the last holder handed the Redis lock to whichever thread takes {@link #mutex} next: the
     * holding above then belongs to that thread, which adopts it without a round trip.
     */
    volatile boolean handedOver;

    /**
     * Clean-up a thread that gave up left for after it has left this key's queue (a request whose reply was lost
     * may have taken the lock or registered a waiter); guarded by {@link #mutex}.
     */
    Runnable undoAfterGivingUp;

    private long wakeups;

    LocalLock(String key) {
        this.key = key;
    }

    synchronized void held(String owner, long token, long leaseNanos, long requestStartNanos, boolean renewing) {
        this.owner = owner;
        this.token = token;
        this.leaseNanos = leaseNanos;
        this.expiresAtNanos = requestStartNanos + leaseNanos;
        this.lostReason = null;
        this.renewing = renewing;
    }

    /** Ends the holding locally (the holder is releasing it); returns its owner. */
    synchronized String releasing() {
        String releasedOwner = owner;
        renewing = false;
        owner = null;
        return releasedOwner;
    }

    /** Records a renewal sent at {@code requestStartNanos}, if {@code renewedOwner} still holds. */
    synchronized void renewed(String renewedOwner, long requestStartNanos) {
        if (owner == renewedOwner) {
            expiresAtNanos = requestStartNanos + leaseNanos;
        }
    }

    /**
     * Marks the holding of {@code lostOwner} lost, if it is still this key's holding and not lost yet.
     *
     * @return whether it was marked now
     */
    synchronized boolean lose(String lostOwner, String reason) {
        if (owner != lostOwner || lostOwner == null || lostReason != null) {
            return false;
        }
        lostReason = reason;
        renewing = false;
        return true;
    }

    /** Whether the Redis lock is still ours as far as this JVM can know: not lost, lease not run out. */
    boolean isValid() {
        return owner != null && lostReason == null && System.nanoTime() - expiresAtNanos < 0;
    }

    /** Why the holding is no longer valid, or {@code null} if it is. */
    String invalidReason() {
        String lost = lostReason;
        if (lost != null) {
            return lost;
        }
        if (System.nanoTime() - expiresAtNanos >= 0) {
            return "its lease of " + TimeUnit.NANOSECONDS.toMillis(leaseNanos) + "ms ran out before it was renewed or released";
        }
        return null;
    }

    synchronized long wakeups() {
        return wakeups;
    }

    /** Called when a release of this key was published: wakes this JVM's contender. */
    synchronized void wake() {
        wakeups++;
        notifyAll();
    }

    /**
     * Waits until {@link #wake()} is called after {@code seen} was read, or for {@code millis}.
     *
     * @return whether the wait was interrupted (only when not {@code interruptible})
     */
    synchronized boolean awaitWake(long seen, long millis, boolean interruptible) throws InterruptedException {
        boolean interrupted = false;
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (wakeups == seen) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                if (interruptible) {
                    throw e;
                }
                interrupted = true;
            }
        }
        return interrupted;
    }
}
