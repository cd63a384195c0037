package io.github.redislock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One line of Linux's {@code schedstat} for a process or thread ({@code /proc/<pid>/schedstat},
 * {@code /proc/<pid>/task/<tid>/schedstat}): the time it ran on a processor and the time it waited, ready to run,
 * for one, in ns since it started.
 */
record Schedstat(long onCpuNanos, long waitingNanos) {

    static Schedstat read(Path file) throws IOException {
        String[] fields = Files.readString(file).trim().split("\\s+");
        return new Schedstat(Long.parseLong(fields[0]), Long.parseLong(fields[1]));
    }
}
