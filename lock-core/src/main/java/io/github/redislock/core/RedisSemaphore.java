package io.github.redislock.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A distributed counting semaphore on Redis, made by {@link RedisLockTemplate#semaphore(String, int)}: at most
 * its permit limit is held at once, across threads and JVMs.
 * <p>
 * Each acquisition holds its permits under its own lease, renewed by the watchdog unless the options fix a lease,
 * and gets a fencing token above every earlier one of this semaphore. A crashed holder's permits come back when
 * its lease ends, without anyone releasing them. Waiters sleep until a release is published to them.
 * <p>
 * The limit lives in Redis: the first acquisition stores the count this object was made with, and
 * {@link #setPermits} changes it for every client at run time, keeping the permits already held. A stored limit
 * is kept while the semaphore is used and for a day after; then the count it is made with applies again.
 * <p>
 * Acquisitions are reentrant per thread: a thread that holds permits of this semaphore and acquires again shares
 * its outer acquisition (same permits, token and lease; no round trip) and must not ask for more than it holds.
 * The same key names different things for a semaphore and a lock: they never exclude each other.
 */
public final class RedisSemaphore {

    private final SemaphorePermits engine;
    private final String key;
    private final int initialPermits;
    private final Duration defaultWaitTime;
    private final LockActivity activity;

    RedisSemaphore(SemaphorePermits engine, String key, int initialPermits, Duration defaultWaitTime, LockActivity activity) {
        this.activity = activity;
        this.engine = engine;
        this.key = key;
        this.initialPermits = initialPermits;
        this.defaultWaitTime = defaultWaitTime;
    }

    private Optional<PermitHandle> observed(int permits, Duration wait, LockOptions options) {
        int checked = checkPermits(permits);
        RedisLockTemplate.refuseHoldAtLeast(options, "semaphore");
        return activity.acquire(options.name(), key, LockType.SEMAPHORE,
                () -> engine.tryAcquire(key, initialPermits, checked, wait, options.leaseTime())).map(PermitHandle.class::cast);
    }

    /** The semaphore's key as the caller gave it. */
    public String key() {
        return key;
    }

    /**
     * Acquires {@code permits}, waiting up to the options' wait time.
     *
     * @throws LockNotAcquiredException if not enough permits came free within the wait time, or Redis could not
     *         be reached within it (the Redis exception is the cause)
     * @throws IllegalArgumentException if {@code permits} is below 1
     * @throws IllegalMonitorStateException if this thread holds fewer permits of this semaphore than it asks for
     */
    public PermitHandle acquire(int permits, LockOptions options) {
        Duration wait = waitTime(options);
        return observed(permits, wait, options).orElseThrow(() -> new LockNotAcquiredException(key, wait));
    }

    /** Acquires one permit; see {@link #acquire(int, LockOptions)}. */
    public PermitHandle acquire(LockOptions options) {
        return acquire(1, options);
    }

    /**
     * Like {@link #acquire(int, LockOptions)}, but returns empty instead of throwing when not enough permits came
     * free within the wait time ({@link LockOptions#tryOnce()}: at once). Redis failures still throw
     * {@link LockNotAcquiredException}.
     */
    public Optional<PermitHandle> tryAcquire(int permits, LockOptions options) {
        return observed(permits, waitTime(options), options);
    }

    /** Tries for one permit; see {@link #tryAcquire(int, LockOptions)}. */
    public Optional<PermitHandle> tryAcquire(LockOptions options) {
        return tryAcquire(1, options);
    }

    /** The permits free now, across all clients: the limit less what live holders hold (0 when they hold more). */
    public int availablePermits() {
        return engine.available(key, initialPermits);
    }

    /**
     * Changes the permit limit for every client. Held permits are kept: a lower limit admits nobody until enough
     * are released, a higher one wakes the waiters at once.
     *
     * @param permits the new limit, 0 or more (0 admits nobody)
     */
    public void setPermits(int permits) {
        if (permits < 0) {
            throw new IllegalArgumentException("permits must not be negative, was " + permits);
        }
        engine.setLimit(key, permits);
    }

    private Duration waitTime(LockOptions options) {
        Objects.requireNonNull(options, "options");
        return options.waitTime() != null ? options.waitTime() : defaultWaitTime;
    }

    private static int checkPermits(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("permits to acquire must be at least 1, was " + permits);
        }
        return permits;
    }

    @Override
    public String toString() {
        return "RedisSemaphore[" + key + ", " + initialPermits + " permits initially]";
    }
}
