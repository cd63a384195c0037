package io.github.redislock.core;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work that must not delay the caller: undoing requests whose replies were lost, confirming grants. Runs on the
 * watchdog's background pool, in the queue of the Redis node that serves the task's lock (a frozen Cluster master holds
 * up only its own), and is retried while Redis cannot be reached, until a watchdog lease has passed: by then every
 * lock it could undo has expired anyway. The pause between tries doubles from {@link Durations#ERROR_BACKOFF_MILLIS}
 * up to an eighth of that lease (at most 1 s): a release retried once Redis is back ends the lock then, where a
 * longer pause would leave it to its lease (a Redis restarted from its append-only file brings back a lock whose
 * release failed while it was down).
 */
final class BackgroundCleanup {

    private static final Logger log = LoggerFactory.getLogger(BackgroundCleanup.class);

    private final Watchdog watchdog;
    /** The Redis node that serves a lock's key ({@code null}: the one Redis, or a Cluster master not known yet). */
    private final Function<String, String> nodeOf;
    private final long retryForNanos;
    private final long maxBackoffMillis;
    private final BooleanSupplier closed;

    BackgroundCleanup(Watchdog watchdog, Function<String, String> nodeOf, Duration retryFor, BooleanSupplier closed) {
        this.watchdog = watchdog;
        this.nodeOf = nodeOf;
        this.retryForNanos = retryFor.toNanos();
        this.maxBackoffMillis = Math.max(Durations.ERROR_BACKOFF_MILLIS, Math.min(1000, retryFor.toMillis() / 8));
        this.closed = closed;
    }

    /** Runs {@code task}, which calls Redis about the lock {@code key}, in the queue of the node that serves it. */
    void run(String key, Runnable task) {
        run(key, task, System.nanoTime() + retryForNanos, 0, () -> true);
    }

    /**
     * Runs {@code task} after {@code delayMillis} unless by then {@code stillNeeded} (asked on the scheduler thread, so
     * quick) says it is not: work deferred off a latency-critical moment, which a later event often makes needless.
     *
     * @param key the lock the task calls Redis about, {@code null} for a task that does not call Redis itself
     */
    void runLater(String key, Runnable task, long delayMillis, BooleanSupplier stillNeeded) {
        run(key, task, System.nanoTime() + retryForNanos, delayMillis, stillNeeded);
    }

    private void run(String key, Runnable task, long giveUpAt, long delayMillis, BooleanSupplier stillNeeded) {
        try {
            watchdog.runInBackground(key == null ? null : nodeOf.apply(key), stillNeeded, () -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    if (System.nanoTime() - giveUpAt < 0 && !closed.getAsBoolean()) {
                        log.debug("Background clean-up failed; retrying", e);
                        run(key, task, giveUpAt, Math.min(Math.max(Durations.ERROR_BACKOFF_MILLIS, delayMillis * 2),
                                maxBackoffMillis), stillNeeded);
                    } else {
                        log.debug("Background clean-up failed; Redis TTLs will end what it left", e);
                    }
                }
            }, delayMillis);
        } catch (RuntimeException e) { // closed
            log.debug("Background clean-up not run: the template is closed", e);
        }
    }

    /**
     * Runs Redis calls of a release path with the interrupt flag cleared, then restores it: a driver that aborts
     * a call on an interrupted thread (Lettuce) would lose the reply of a request Redis still runs.
     */
    static void withoutInterrupt(Runnable action) {
        boolean interrupted = Thread.interrupted();
        try {
            action.run();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
