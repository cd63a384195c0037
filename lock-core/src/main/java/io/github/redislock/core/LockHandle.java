package io.github.redislock.core;

/**
 * One acquisition of a distributed lock. Close it (or call {@link #release()}) exactly once, on the
 * thread that acquired it; try-with-resources does both.
 */
public interface LockHandle extends AutoCloseable {

    /** The lock's key as the caller gave it (without the Redis prefix). */
    String key();

    /**
     * The fencing token of this holding: strictly greater than every token handed out earlier for
     * the same key, by any client. Pass it to downstream storage so it can reject a stale holder.
     * A reentrant acquisition shares the outer acquisition's token.
     */
    long fencingToken();

    /**
     * Whether this client still holds the lock: false once released, or once the lease may have
     * ended without a renewal (the watchdog found the lock gone, or could not reach Redis in time).
     */
    boolean isHeld();

    /**
     * Releases this acquisition; the Redis lock is released with the outermost one.
     *
     * @throws IllegalMonitorStateException if called by another thread, or twice
     * @throws LockLostException if the lock had been lost before it was released
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
