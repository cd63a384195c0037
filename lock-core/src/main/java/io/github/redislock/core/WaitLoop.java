package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.github.redislock.core.LockScripts.AcquireReply;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.PermissionDeniedDataAccessException;

/**
 * The acquisition skeleton every lock type shares: ask Redis; while another owner holds the lock, sleep until a
 * release is published to this client, at the latest until the holder's lease would end (re-checking more often
 * while the release subscription is down, and backing off while Redis cannot be reached); until the deadline.
 * What to ask Redis and how to withdraw are the lock type's: an {@link Attempt} and a {@link Withdrawal}.
 * <p>
 * A call Redis denies to the connection's user ({@link AclDenials}), and a release subscription it denies, end the wait
 * at once with {@link LockNotAcquiredException}: no permission appears by waiting.
 */
final class WaitLoop {

    /** Re-check interval while the release subscription is down (Redis restarting, say). */
    private static final long UNSUBSCRIBED_RECHECK_MILLIS = 50;
    /**
     * The longest a waiter sleeps before re-checking, whatever the holder's TTL: bounds the cost of a
     * wake-up lost to a waiter that died or left, and how long a dead waiter's registration lives.
     */
    private static final long MAX_SLEEP_MILLIS = 5000;
    private static final Duration LONGEST_FINITE_WAIT = Duration.ofDays(36_500);

    /** Whether release notices reach this client now (starting its subscription if needed). */
    private final BooleanSupplier listening;
    /** Why Redis refused the subscription to release notices, or {@code null}. */
    private final Supplier<@Nullable PermissionDeniedDataAccessException> refusal;

    WaitLoop(WakeupSubscriber subscriber) {
        this(subscriber::isListening, subscriber::refusal);
    }

    /** Over several subscriptions (Redlock: one per node), as {@code listening} and {@code refusal} sum them up. */
    WaitLoop(BooleanSupplier listening, Supplier<@Nullable PermissionDeniedDataAccessException> refusal) {
        this.listening = listening;
        this.refusal = refusal;
    }

    /**
     * Starts this client's subscription to release notices, if not yet started, for a holder that must hear what
     * is published to it (a read share told of a waiting writer); returns whether it is listening now.
     */
    boolean listen() {
        return listening.getAsBoolean();
    }

    /** One request to Redis for the lock; on success it records the holding before it returns. */
    @FunctionalInterface
    interface Attempt {

        /**
         * @param sleepMillis how long the caller will sleep at most before asking again (0: it will not wait)
         * @param registered whether an earlier attempt may have registered this client as a waiter
         * @param number which attempt of the wait this is, sent with its request: after a failed attempt, the
         *        requests of the attempts before it change nothing if they land later
         * @throws DataAccessException when Redis could not be reached; the request may still run there
         */
        AcquireReply attempt(long sleepMillis, boolean registered, AttemptNumber number);
    }

    /** Leaves nothing behind in Redis after a wait ends without the lock. */
    @FunctionalInterface
    interface Withdrawal {

        /**
         * @param registered whether an attempt may have registered this client as a waiter
         * @param uncertain whether an attempt failed: its request may have run in Redis, or still run there, after the
         *        client gave up; the withdrawal then gives up every attempt ({@link LockStore#abandon}) before it
         *        releases what one may have taken
         */
        void giveUp(boolean registered, boolean uncertain);
    }

    /** When a wait began and when it ends. */
    record Deadline(long startNanos, long waitNanos) {

        /** A wait beyond a century cannot be told apart from forever, and would overflow nanosecond arithmetic. */
        static Deadline startingNow(Duration wait) {
            return new Deadline(System.nanoTime(), wait.compareTo(LONGEST_FINITE_WAIT) > 0 ? Long.MAX_VALUE : wait.toNanos());
        }

        boolean isForever() {
            return waitNanos == Long.MAX_VALUE;
        }

        boolean isTryOnce() {
            return waitNanos == 0;
        }

        long remainingNanos() {
            return isForever() ? Long.MAX_VALUE : Math.max(0, startNanos + waitNanos - System.nanoTime());
        }

        Duration elapsed() {
            return Duration.ofNanos(System.nanoTime() - startNanos);
        }
    }

    /**
     * Attempts until one succeeds or the deadline passes; the caller tells success by what its attempt recorded.
     *
     * @param lock the key's local lock, whose wake-ups end a sleep
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if not, waiting
     *        goes on
     * @return whether an interrupt was swallowed (only when not interruptible)
     * @throws LockNotAcquiredException when the deadline passed and the latest attempt failed to reach Redis
     */
    boolean await(LocalLock lock, Deadline deadline, boolean interruptible, Attempt attempt, Withdrawal withdrawal)
            throws InterruptedException {
        boolean interrupted = false;
        boolean registered = false;
        // the error of the latest attempt, cleared by a clean answer: it is what a caller is told at the deadline
        DataAccessException lastError = null;
        // whether any attempt failed: its request may still run in Redis, taking the lock or registering a waiter
        boolean uncertain = false;
        int attempts = 0;
        while (true) {
            long seen = lock.wakeups();
            long left = deadline.remainingNanos();
            AcquireReply reply;
            try {
                reply = attempt.attempt(Math.min(TimeUnit.NANOSECONDS.toMillis(left), MAX_SLEEP_MILLIS), registered,
                        AttemptNumber.of(++attempts, uncertain));
                registered |= left > 0;
                lastError = null; // a later clean answer supersedes an earlier error
            } catch (PermissionDeniedDataAccessException e) {
                // the Redis user may not do what the lock needs: waiting will not change that
                withdrawal.giveUp(registered || left > 0, true);
                throw new LockNotAcquiredException(lock.key, deadline.elapsed(), e);
            } catch (DataAccessException e) {
                lastError = e;
                uncertain = true;
                registered |= left > 0;
                reply = null;
            }
            if (reply != null && reply.acquired()) {
                return interrupted;
            }
            left = deadline.remainingNanos();
            if (left <= 0) {
                withdrawal.giveUp(registered, uncertain);
                if (lastError != null) {
                    throw new LockNotAcquiredException(lock.key, deadline.elapsed(), lastError);
                }
                return interrupted;
            }
            PermissionDeniedDataAccessException refused = refusal.get();
            if (refused != null) {
                // no release would wake this waiter (and the holder's release could not publish to it either)
                withdrawal.giveUp(registered, uncertain);
                throw new LockNotAcquiredException(lock.key, deadline.elapsed(), refused);
            }
            long sleepMillis;
            if (reply == null) {
                sleepMillis = Durations.ERROR_BACKOFF_MILLIS;
            } else {
                sleepMillis = Math.min(reply.retryAfterMillis(),
                        listening.getAsBoolean() ? MAX_SLEEP_MILLIS : UNSUBSCRIBED_RECHECK_MILLIS);
            }
            sleepMillis = Math.max(1, Math.min(sleepMillis, TimeUnit.NANOSECONDS.toMillis(left) + 1));
            try {
                interrupted |= lock.awaitWake(seen, sleepMillis, interruptible);
            } catch (InterruptedException e) {
                withdrawal.giveUp(registered, uncertain);
                throw e;
            }
        }
    }
}
