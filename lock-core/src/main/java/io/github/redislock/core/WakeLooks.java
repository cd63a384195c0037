package io.github.redislock.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Looks, a turn's time ({@link LockScripts#TURN_MILLIS_VALUE}, 200 ms) after a release that woke some of the clients
 * waiting for a key but not all of them, whether the woken ones took what the release freed; if not (they died or
 * left, and their entries have not gone stale yet), a script wakes every client still waiting, which would otherwise
 * sleep until its next look (up to 5 s). One look per key at a time: a release while a look is due moves it to that
 * release's turn end.
 */
final class WakeLooks {

    private static final long DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(LockScripts.TURN_MILLIS_VALUE);

    private final BackgroundCleanup cleanup;
    /** Runs the look's script: wakes the clients still waiting if nobody took what was freed; returns ms to look again, else 0. */
    private final ToLongFunction<String> look;
    /** When the look at each key is due, by {@link System#nanoTime()}. */
    private final ConcurrentHashMap<String, Long> due = new ConcurrentHashMap<>();

    WakeLooks(BackgroundCleanup cleanup, ToLongFunction<String> look) {
        this.cleanup = cleanup;
        this.look = look;
    }

    /** A release of {@code key} just woke some of its waiting clients, not all: look once their turn is over. */
    void after(String key) {
        lookAt(key, System.nanoTime() + DELAY_NANOS);
    }

    private void lookAt(String key, long atNanos) {
        if (due.put(key, atNanos) == null) {
            schedule(key, atNanos);
        }
    }

    private void schedule(String key, long atNanos) {
        long delayMillis = TimeUnit.NANOSECONDS.toMillis(Math.max(0, atNanos - System.nanoTime())) + 1;
        cleanup.runLater(key, () -> look(key), delayMillis, () -> true);
    }

    private void look(String key) {
        Long at = due.get(key);
        if (at == null) {
            return;
        }
        if (at - System.nanoTime() > 0) {
            schedule(key, at); // a later release moved it
            return;
        }
        long againMillis;
        try {
            againMillis = look.applyAsLong(key);
        } catch (RuntimeException e) {
            // Redis unreachable: the waiters' own looks cover it; a later release schedules a look of its own
            due.remove(key, at);
            throw e;
        }
        if (!due.remove(key, at)) {
            look(key); // a release meanwhile: look at its turn's end
        } else if (againMillis > 0) {
            lookAt(key, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(againMillis));
        }
    }
}
