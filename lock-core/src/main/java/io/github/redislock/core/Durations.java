package io.github.redislock.core;

import java.time.Duration;

/** Durations the engine shares, and how messages print them. */
final class Durations {

    /**
     * Pause before asking Redis again after a call failed (Redis unreachable, say): the wait loop between acquisition
     * attempts, and background clean-up before its first retry.
     */
    static final long ERROR_BACKOFF_MILLIS = 50;

    private Durations() {
    }

    /** Waits this long or longer are unbounded ({@link LockOptions#WAIT_FOREVER}), and print so. */
    private static final Duration UNBOUNDED = Duration.ofDays(365L * 100);

    static String format(Duration d) {
        if (d == null || d.compareTo(UNBOUNDED) >= 0) {
            return "unbounded time"; // WAIT_FOREVER's milliseconds overflow a long
        }
        long millis = d.toMillis();
        if (millis % 1000 == 0) {
            return (millis / 1000) + "s";
        }
        return millis + "ms";
    }
}
