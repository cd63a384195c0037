package io.github.redislock.bench;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A running total per live Java thread of this JVM (CPU time, bytes allocated), taken as a snapshot by thread id, and
 * what the threads added since an earlier snapshot. The JIT compiler's and the garbage collector's threads are not
 * Java threads the JVM lists, so neither is counted.
 */
final class ThreadTotals {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private ThreadTotals() {
    }

    /** Each live thread's CPU time so far, in ns. */
    static Map<Long, Long> cpuNanos() {
        return snapshot(ids -> {
            long[] cpu = new long[ids.length];
            for (int i = 0; i < ids.length; i++) {
                cpu[i] = THREADS.getThreadCpuTime(ids[i]);
            }
            return cpu;
        });
    }

    /** Each live thread's bytes allocated so far. */
    static Map<Long, Long> allocatedBytes() {
        return snapshot(THREADS::getThreadAllocatedBytes);
    }

    /**
     * What the threads of {@code now} added since {@code before}: a thread started since counts from zero, one that
     * ended since is not counted.
     */
    static long since(Map<Long, Long> before, Map<Long, Long> now) {
        long total = 0;
        for (Map.Entry<Long, Long> thread : now.entrySet()) {
            total += thread.getValue() - before.getOrDefault(thread.getKey(), 0L);
        }
        return total;
    }

    private static Map<Long, Long> snapshot(Function<long[], long[]> totals) {
        long[] ids = THREADS.getAllThreadIds();
        long[] values = totals.apply(ids);
        Map<Long, Long> byThread = new HashMap<>();
        for (int i = 0; i < ids.length; i++) {
            if (values[i] >= 0) { // -1: the thread ended meanwhile
                byThread.put(ids[i], values[i]);
            }
        }
        return byThread;
    }
}
