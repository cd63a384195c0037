package io.github.redislock.core;

/**
 * Permits of a {@link RedisSemaphore}, held under one lease with one fencing token. Close it (or call
 * {@link #release()}) exactly once, on the thread that acquired it; try-with-resources does both.
 */
public interface PermitHandle extends LockHandle {

    /** How many permits this acquisition holds (a nested acquisition shares the outer one's). */
    int permits();
}
