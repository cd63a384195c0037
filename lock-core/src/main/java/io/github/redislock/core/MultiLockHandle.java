package io.github.redislock.core;

import java.util.List;
import java.util.Map;

/**
 * Several locks taken all or nothing by {@link RedisLockTemplate#acquireAll}, held and released as one. Close it
 * (or call {@link #release()}) exactly once, on the thread that acquired it; try-with-resources does both.
 */
public interface MultiLockHandle extends AutoCloseable {

    /** The keys, sorted and without duplicates: the order in which they were taken. */
    List<String> keys();

    /** Each key's fencing token (see {@link LockHandle#fencingToken()}), in the order the keys were taken. */
    Map<String, Long> fencingTokens();

    /**
     * One key's fencing token.
     *
     * @throws IllegalArgumentException for a key this handle does not hold
     */
    long fencingToken(String key);

    /** Whether this client still holds every one of the locks; see {@link LockHandle#isHeld()}. */
    boolean isHeld();

    /**
     * Releases every lock, in the reverse of the order they were taken. All are released even when one fails;
     * the first failure is thrown then, with the others added to it as suppressed.
     *
     * @throws IllegalMonitorStateException if called by another thread, or twice
     * @throws LockLostException if a lock had been lost before it was released
     */
    void release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
