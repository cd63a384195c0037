package io.github.redislock.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How to acquire a lock: how long to wait for it, and how long its lease is.
 * <p>
 * A {@code null} wait time means the template's default; {@link #WAIT_FOREVER} waits without bound.
 * A {@code null} lease means the watchdog: the lease is the template's watchdog lease, renewed every
 * third of it while the lock is held. An explicit lease is never renewed.
 */
public final class LockOptions {

    /** Waits until the lock is acquired. */
    public static final Duration WAIT_FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    private static final LockOptions DEFAULTS = new LockOptions(null, null);

    private final Duration waitTime;
    private final Duration leaseTime;

    private LockOptions(Duration waitTime, Duration leaseTime) {
        if (waitTime != null && waitTime.isNegative()) {
            throw new IllegalArgumentException("waitTime must not be negative, was " + waitTime);
        }
        if (leaseTime != null && (leaseTime.isNegative() || leaseTime.isZero() || leaseTime.toMillis() < 1)) {
            throw new IllegalArgumentException("leaseTime must be at least 1ms, was " + leaseTime);
        }
        this.waitTime = waitTime;
        this.leaseTime = leaseTime;
    }

    /** The template's default wait time and the watchdog. */
    public static LockOptions defaults() {
        return DEFAULTS;
    }

    /** Waits up to {@code waitTime} ({@code Duration.ZERO}: try once), with the watchdog. */
    public static LockOptions waitFor(Duration waitTime) {
        return new LockOptions(Objects.requireNonNull(waitTime, "waitTime"), null);
    }

    /** Tries once, with the watchdog. */
    public static LockOptions tryOnce() {
        return waitFor(Duration.ZERO);
    }

    /** A copy with a fixed lease that is never renewed. */
    public LockOptions withLease(Duration leaseTime) {
        return new LockOptions(waitTime, Objects.requireNonNull(leaseTime, "leaseTime"));
    }

    /** A copy with another wait time. */
    public LockOptions withWait(Duration waitTime) {
        return new LockOptions(Objects.requireNonNull(waitTime, "waitTime"), leaseTime);
    }

    /** The wait time, or {@code null} for the template's default. */
    public Duration waitTime() {
        return waitTime;
    }

    /** The fixed lease, or {@code null} for the watchdog. */
    public Duration leaseTime() {
        return leaseTime;
    }

    @Override
    public String toString() {
        return "LockOptions[wait=" + (waitTime == null ? "default" : Durations.format(waitTime)) + ", lease="
                + (leaseTime == null ? "watchdog" : Durations.format(leaseTime)) + "]";
    }
}
