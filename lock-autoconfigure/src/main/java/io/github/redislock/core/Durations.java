package io.github.redislock.core;

import java.time.Duration;

final class Durations {

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
