package io.github.redislock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Told what the locks of a {@link RedisLockTemplate} do, for metrics and tracing: how each wait ended and how long
 * it took, how long each lock was held, locks found lost, and each watchdog renewal. Register one with
 * {@link RedisLockTemplate#addObserver}. Every method has a default that does nothing.
 * <p>
 * The {@code name} of each call is the one given in its {@link LockOptions#withName options} (for
 * {@code @DistributedLock}, the annotation's {@code name}, else the method), never the resolved key, so a metric
 * tagged with it has a bounded number of values; {@value #UNNAMED} when the caller gave none.
 * <p>
 * Observers are called on the thread that acquires or releases ({@link #acquiring}, {@link Acquisition},
 * {@link #released}), or on the watchdog's threads ({@link #lost}, {@link #renewal}); they must be quick and must
 * not throw (what they throw is logged and dropped).
 */
public interface LockObserver {

    /** The name of a call whose options named none. */
    String UNNAMED = "unnamed";

    /**
     * A caller is about to wait for a lock, on its own thread; the returned acquisition is told, on the same thread,
     * how the wait ended. Return {@link Acquisition#NONE} to ignore it.
     */
    default Acquisition acquiring(LockEvent lock) {
        return Acquisition.NONE;
    }

    /** A lock acquired through this template was released after being held for {@code held}. */
    default void released(LockEvent lock, Duration held) {
    }

    /** The watchdog found a held lock lost before its release (see {@link LockLostListener}). */
    default void lost(LockEvent lock, String reason) {
    }

    /** The watchdog tried to renew a held lock's lease. */
    default void renewal(LockEvent lock, RenewalOutcome outcome) {
    }

    /** How one wait for a lock ended. */
    interface Acquisition {

        Acquisition NONE = new Acquisition() {
        };

        /** The lock was acquired after waiting {@code waited}. */
        default void acquired(Duration waited) {
        }

        /**
         * The lock was not acquired after waiting {@code waited}.
         *
         * @param failure why: {@code null} when another owner held it for the whole wait (a timeout), else the
         *        Redis failure or interrupt that ended the wait
         */
        default void notAcquired(Duration waited, @Nullable Throwable failure) {
        }
    }

    /**
     * Which lock an event is about.
     *
     * @param name the call's metric name ({@value LockObserver#UNNAMED} if it gave none)
     * @param key the lock's key
     * @param type the kind of lock
     */
    record LockEvent(String name, String key, LockType type) {
    }

    /** What became of one renewal. */
    enum RenewalOutcome {
        /** Redis extended the lease. */
        RENEWED,
        /** Redis could not be reached, or did not answer in time; the watchdog tries again while the lease lasts. */
        FAILED,
        /** The lock was gone from Redis, or its lease ran out before a renewal got through. */
        LOST;

        /** The outcome as a metric tag: {@code renewed}, {@code failed}, {@code lost}. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
