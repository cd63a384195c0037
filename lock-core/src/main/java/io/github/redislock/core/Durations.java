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

    static String format(Duration d) {
        if (d == null) {
            return "unbounded time";
        }
        long millis = d.toMillis();
        if (millis % 1000 == 0) {
            return (millis / 1000) + "s";
        }
        return millis + "ms";
    }
}
