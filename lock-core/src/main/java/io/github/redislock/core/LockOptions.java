package io.github.redislock.core;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * How to acquire a lock: how long to wait for it, and how long its lease is.
 * <p>
 * A {@code null} wait time means the template's default; {@link #WAIT_FOREVER} waits without bound.
 * A {@code null} lease means the watchdog: the lease is the template's watchdog lease, renewed every
 * third of it while the lock is held. An explicit lease is never renewed.
 * <p>
 * Optional: a {@link #withName name} that tells the call apart in metrics and tracing (never the key, whose
 * values are unbounded), and a {@link #withHoldAtLeast minimum hold} for scheduled jobs.
 */
public final class LockOptions {

    /** Waits until the lock is acquired. */
    public static final Duration WAIT_FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    private static final LockOptions DEFAULTS = new LockOptions(null, null, null, null);

    private final @Nullable Duration waitTime;
    private final @Nullable Duration leaseTime;
    private final @Nullable String name;
    private final @Nullable Duration holdAtLeast;

    private LockOptions(@Nullable Duration waitTime, @Nullable Duration leaseTime, @Nullable String name,
            @Nullable Duration holdAtLeast) {
        if (waitTime != null && waitTime.isNegative()) {
            throw new IllegalArgumentException("waitTime must not be negative, was " + waitTime);
        }
        if (leaseTime != null && (leaseTime.isNegative() || leaseTime.isZero() || leaseTime.toMillis() < 1)) {
            throw new IllegalArgumentException("leaseTime must be at least 1ms, was " + leaseTime);
        }
        if (name != null && name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        if (holdAtLeast != null && (holdAtLeast.isNegative() || holdAtLeast.isZero())) {
            throw new IllegalArgumentException("holdAtLeast must be positive, was " + holdAtLeast);
        }
        if (holdAtLeast != null && leaseTime != null && holdAtLeast.compareTo(leaseTime) > 0) {
            throw new IllegalArgumentException("holdAtLeast (" + Durations.format(holdAtLeast)
                    + ") must not be longer than the lease (" + Durations.format(leaseTime)
                    + "): the lock could not stay held that long");
        }
        this.waitTime = waitTime;
        this.leaseTime = leaseTime;
        this.name = name;
        this.holdAtLeast = holdAtLeast;
    }

    /** The template's default wait time and the watchdog. */
    public static LockOptions defaults() {
        return DEFAULTS;
    }

    /** Waits up to {@code waitTime} ({@code Duration.ZERO}: try once), with the watchdog. */
    public static LockOptions waitFor(Duration waitTime) {
        return new LockOptions(Objects.requireNonNull(waitTime, "waitTime"), null, null, null);
    }

    /** Tries once, with the watchdog. */
    public static LockOptions tryOnce() {
        return waitFor(Duration.ZERO);
    }

    /** A copy with a fixed lease that is never renewed. */
    public LockOptions withLease(Duration leaseTime) {
        return new LockOptions(waitTime, Objects.requireNonNull(leaseTime, "leaseTime"), name, holdAtLeast);
    }

    /** A copy with another wait time. */
    public LockOptions withWait(Duration waitTime) {
        return new LockOptions(Objects.requireNonNull(waitTime, "waitTime"), leaseTime, name, holdAtLeast);
    }

    /**
     * A copy with a name for metrics and tracing ({@link LockObserver}): a fixed word per kind of call, such as
     * {@code "orders"}, never the key (keys have unbounded values, and a metric tag must not).
     */
    public LockOptions withName(String name) {
        return new LockOptions(waitTime, leaseTime, Objects.requireNonNull(name, "name"), holdAtLeast);
    }

    /**
     * A copy whose release keeps the lock until at least {@code holdAtLeast} after it was acquired (ShedLock's
     * {@code lockAtLeastFor}): a release before then does not delete the lock in Redis but sets it to expire then,
     * so another instance whose scheduled tick fires a little late finds it still held. The holder's own threads
     * cannot take it either until then. Not longer than an explicit lease; exclusive locks only.
     */
    public LockOptions withHoldAtLeast(Duration holdAtLeast) {
        return new LockOptions(waitTime, leaseTime, name, Objects.requireNonNull(holdAtLeast, "holdAtLeast"));
    }

    /** The name for metrics and tracing, or {@code null} for none ({@value LockObserver#UNNAMED}). */
    public @Nullable String name() {
        return name;
    }

    /** The minimum time the lock stays held after acquisition, or {@code null} for none (released at once). */
    public @Nullable Duration holdAtLeast() {
        return holdAtLeast;
    }

    /** The wait time, or {@code null} for the template's default. */
    public @Nullable Duration waitTime() {
        return waitTime;
    }

    /** The fixed lease, or {@code null} for the watchdog. */
    public @Nullable Duration leaseTime() {
        return leaseTime;
    }

    @Override
    public String toString() {
        return "LockOptions[wait=" + (waitTime == null ? "default" : Durations.format(waitTime)) + ", lease="
                + (leaseTime == null ? "watchdog" : Durations.format(leaseTime))
                + (holdAtLeast == null ? "" : ", holdAtLeast=" + Durations.format(holdAtLeast))
                + (name == null ? "" : ", name=" + name) + "]";
    }
}
