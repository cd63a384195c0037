package io.github.redislock.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU time of this JVM's garbage collector threads (G1's workers, concurrent marking and refinement threads),
 * which are not Java threads and so are not in {@link ThreadTotals}: from Linux's {@code /proc/self/task/<tid>/schedstat}
 * (time on a processor, in ns) of the threads whose names HotSpot gives them ("GC Thread#0", "G1 Refine#0", "G1 Conc#0",
 * "G1 Main Marker", "G1 Service"). A library that stores new objects into long-lived ones at every renewal makes G1's
 * refinement threads work for each store; this is where that shows.
 */
final class GcThreads {

    private static final Path TASKS = Path.of("/proc/self/task");

    private GcThreads() {
    }

    /** The GC threads' CPU time so far, in ns; -1 where it is not readable (not Linux). */
    static long cpuNanos() {
        long total = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                try {
                    String name = Files.readString(task.resolve("comm")).trim();
                    if (name.startsWith("GC Thread") || name.startsWith("G1 ")) {
                        total += Schedstat.read(task.resolve("schedstat")).onCpuNanos();
                    }
                } catch (IOException | RuntimeException e) { // the thread ended meanwhile
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return total;
    }
}
