package io.github.redislock.core;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Holdings taken from a grant's message, and their confirmations: grants (the fair lock's hand-over, the exclusive lock's grant to this
 * client): the holder holds from the message on the grant's short lease, and a confirmation in the background gives it
 * the full one. With the watchdog, one is due {@value FairLockScripts#CONFIRM_AFTER_MILLIS} ms after the grant, and at
 * the latest when half the grant has passed since the holder's latest request before it; one scheduled sweep sends
 * those still held then. Scheduling a task per grant would wake the scheduler thread at the moment the new holder
 * resumes, and a cross-JVM hand-off would pay for it (S4 in docs/benchmarks.md); a holder that releases before its
 * confirmation is due sends none (its release ended the grant in Redis). With a fixed lease, which counts from the
 * acquisition, it is sent at once.
 */
final class GrantConfirmations {

    /** How long a grant lasts unless confirmed: the fair lock's hand-over and the exclusive lock's grant alike. */
    static final long GRANT_NANOS = TimeUnit.MILLISECONDS.toNanos(FairLockScripts.GRANT_MILLIS);

    private final BackgroundCleanup cleanup;
    private final Watchdog watchdog;
    private final ConcurrentLinkedQueue<Due> due = new ConcurrentLinkedQueue<>();
    /** Whether a sweep of {@link #due} is scheduled; a grant that finds none schedules one. */
    private final AtomicBoolean sweepScheduled = new AtomicBoolean();

    GrantConfirmations(BackgroundCleanup cleanup, Watchdog watchdog) {
        this.cleanup = cleanup;
        this.watchdog = watchdog;
    }

    /** The lock type's confirmation call: gives {@code owner}'s grant its full lease; whether it was still its own. */
    @FunctionalInterface
    interface Confirm {

        boolean confirm(String key, String owner, long leaseMillis);
    }

    /**
     * Whether a grant made after a request sent at {@code grantedAfterNanos} may still be held from its message: less
     * than half of it has passed since then, so its confirmation has the other half to reach Redis.
     */
    static boolean youngEnough(long grantedAfterNanos) {
        return System.nanoTime() - (grantedAfterNanos + GRANT_NANOS / 2) < 0;
    }

    /**
     * Holds {@code lock} for {@code owner} with {@code token} from a grant's message, on the grant's short lease counted
     * from {@code grantedAfterNanos}, and confirms it in the background with {@code confirm}, which gives it
     * {@code leaseMillis} (and the watchdog, when {@code renewing}); a confirmation that finds the lock no longer
     * {@code owner}'s marks the holding lost, and so does one that cannot reach Redis (it is retried) once the grant has
     * run out. None is sent if the holding was released first.
     */
    void hold(LocalLock lock, String owner, long token, long grantedAfterNanos, long leaseMillis, boolean renewing,
            Confirm confirm, Renewer renewer) {
        lock.held(owner, token, GRANT_NANOS, grantedAfterNanos, false);
        LocalLock.Holding granted = lock.holding;
        Runnable send = () -> {
            if (lock.holding != granted) {
                return; // released (which ended the grant in Redis) before the confirmation ran
            }
            long requestStart = System.nanoTime();
            boolean stillOwn;
            try {
                stillOwn = confirm.confirm(lock.key, owner, leaseMillis);
            } catch (RuntimeException e) {
                if (lock.holding == granted && lock.invalidReason() != null) {
                    // the grant ran out meanwhile: another client may hold the lock now, so the holder is told at once,
                    // as the watchdog tells one whose renewals cannot reach Redis, not once Redis answers again
                    watchdog.markLost(lock, renewer, granted, "Redis could not be reached to confirm its grant before "
                            + "the grant ran out: " + e.getMessage());
                    return;
                }
                throw e; // retried in the background
            }
            if (stillOwn) {
                lock.confirmed(granted, TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart, renewing);
            } else {
                watchdog.markLost(lock, renewer, granted, "its grant was gone from Redis (expired, deleted, or Redis "
                        + "lost it) before it was confirmed");
            }
        };
        schedule(lock, granted, send, grantedAfterNanos, renewing);
    }

    /** A grant's confirmation, needed while {@code lock} is still in the holding that {@code granted} began. */
    private record Due(LocalLock lock, LocalLock.Holding granted, Runnable send) {

        boolean needed() {
            return lock.holding == granted;
        }
    }

    /**
     * Sends {@code send} once the confirmation of {@code granted}, a holding taken from a grant's message, is due, if
     * {@code lock} is still in that holding then.
     *
     * @param grantedAfterNanos when the holder's latest request before the grant was sent: the grant's lease counts
     *        from then
     * @param renewing whether the watchdog renews the holding (else it has a fixed lease and is confirmed at once)
     */
    private void schedule(LocalLock lock, LocalLock.Holding granted, Runnable send, long grantedAfterNanos,
            boolean renewing) {
        if (!renewing) {
            cleanup.run(lock.key, send);
            return;
        }
        // not at once: a thread woken for the confirmation now takes CPU from the holder just as it resumes
        Due confirmation = new Due(lock, granted, send);
        long dueInMillis = TimeUnit.NANOSECONDS.toMillis(grantedAfterNanos + GRANT_NANOS / 2 - System.nanoTime());
        if (dueInMillis < FairLockScripts.CONFIRM_AFTER_MILLIS) { // taken late: due before a sweep would come round
            cleanup.runLater(lock.key, send, Math.max(0, dueInMillis), confirmation::needed);
            return;
        }
        // a sweep scheduled earlier runs no later than this grant's confirmation is due
        due.add(confirmation);
        if (sweepScheduled.compareAndSet(false, true)) {
            cleanup.runLater(null, this::sendDue, FairLockScripts.CONFIRM_AFTER_MILLIS, this::anyNeeded);
        }
    }

    /**
     * Asked on the scheduler thread when a sweep is due: drops the confirmations of holdings released meanwhile, and
     * whether any is left to send (if not, no pool thread is woken).
     */
    private boolean anyNeeded() {
        due.removeIf(confirmation -> !confirmation.needed());
        if (!due.isEmpty()) {
            return true;
        }
        sweepScheduled.set(false);
        // a grant added just now may have seen the sweep still scheduled: this one then runs for it
        return !due.isEmpty() && sweepScheduled.compareAndSet(false, true);
    }

    /** Sends the due confirmations, each on the background pool (retried there while Redis cannot be reached). */
    private void sendDue() {
        sweepScheduled.set(false); // a grant from now on schedules the next sweep (or is confirmed early by this one)
        for (Due confirmation; (confirmation = due.poll()) != null; ) {
            if (confirmation.needed()) {
                cleanup.run(confirmation.lock().key, confirmation.send());
            }
        }
    }
}
