package io.github.redislock.core;

import java.time.Duration;

/** The lock could not be acquired within the wait time (or Redis could not be reached). */
public class LockNotAcquiredException extends RuntimeException {

    private final String key;
    private final Duration waited;

    public LockNotAcquiredException(String key, Duration waited, Throwable cause) {
        super(message(key, waited, cause), cause);
        this.key = key;
        this.waited = waited;
    }

    public LockNotAcquiredException(String key, Duration waited) {
        this(key, waited, null);
    }

    private static String message(String key, Duration waited, Throwable cause) {
        String base = "Could not acquire lock '" + key + "' within " + Durations.format(waited);
        return cause == null ? base + ": it is held by another owner" : base + ": " + cause.getMessage();
    }

    /** The key of the lock that was not acquired. */
    public String getKey() {
        return key;
    }

    /** How long the caller waited. */
    public Duration getWaited() {
        return waited;
    }
}
