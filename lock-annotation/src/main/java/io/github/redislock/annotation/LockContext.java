package io.github.redislock.annotation;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.Map;
import java.util.Set;

/**
 * The locks the current thread holds through {@link DistributedLock} methods, innermost first. Nested
 * locked methods each see their own lock; when one returns, the caller's lock is current again.
 */
public final class LockContext {

    private static final ThreadLocal<Deque<Map<String, Long>>> FRAMES = ThreadLocal.withInitial(ArrayDeque::new);

    private LockContext() {
    }

    /**
     * The fencing token of the innermost {@link DistributedLock} method's lock.
     *
     * @throws IllegalStateException outside such a method, or when it locks several keys
     */
    public static long fencingToken() {
        Map<String, Long> frame = innermost();
        if (frame.size() != 1) {
            throw new IllegalStateException("The current @DistributedLock method holds " + frame.size()
                    + " keys " + frame.keySet() + "; use LockContext.fencingToken(key)");
        }
        return frame.values().iterator().next();
    }

    /**
     * The fencing token of one of the innermost {@link DistributedLock} method's keys.
     *
     * @throws IllegalStateException outside such a method, or for a key it does not hold
     */
    public static long fencingToken(String key) {
        Long token = innermost().get(key);
        if (token == null) {
            throw new IllegalStateException("The current @DistributedLock method does not hold '" + key + "'; it holds "
                    + innermost().keySet());
        }
        return token;
    }

    /**
     * The keys the innermost {@link DistributedLock} method holds, as resolved for this call (with
     * {@code name} prefix, without the Redis key prefix), in the order they were taken.
     *
     * @throws IllegalStateException outside such a method
     */
    public static Set<String> keys() {
        return Collections.unmodifiableSet(innermost().keySet());
    }

    /** Whether the current thread runs inside a {@link DistributedLock} method. */
    public static boolean isActive() {
        return !FRAMES.get().isEmpty();
    }

    private static Map<String, Long> innermost() {
        Map<String, Long> frame = FRAMES.get().peek();
        if (frame == null) {
            throw new IllegalStateException("No @DistributedLock method is running on this thread");
        }
        return frame;
    }

    static void push(Map<String, Long> tokensByKey) {
        FRAMES.get().push(tokensByKey);
    }

    static void pop() {
        Deque<Map<String, Long>> frames = FRAMES.get();
        frames.pop();
        if (frames.isEmpty()) {
            FRAMES.remove();
        }
    }
}
