package io.github.redislock.test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.ToLongFunction;

/** Checks on recorded enter/exit intervals of critical sections, for tests that prove exclusion or a permit limit. */
public final class Intervals {

    private Intervals() {
    }

    /** When one critical section was entered and left, by this JVM's {@link System#nanoTime()}. */
    public record Interval(long enter, long exit) {
    }

    /** The most of {@code intervals} that overlap at any instant; see {@link #maxConcurrency(Collection, ToLongFunction, ToLongFunction)}. */
    public static int maxConcurrency(Collection<Interval> intervals) {
        return maxConcurrency(intervals, Interval::enter, Interval::exit);
    }

    /** The most intervals that overlap at any instant; at equal times an exit comes first, so touching ones do not. */
    public static <T> int maxConcurrency(Collection<T> intervals, ToLongFunction<T> enter, ToLongFunction<T> exit) {
        List<long[]> events = new ArrayList<>();
        for (T interval : intervals) {
            events.add(new long[] {enter.applyAsLong(interval), 1});
            events.add(new long[] {exit.applyAsLong(interval), -1});
        }
        events.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        int current = 0;
        int max = 0;
        for (long[] event : events) {
            current += (int) event[1];
            max = Math.max(max, current);
        }
        return max;
    }
}
