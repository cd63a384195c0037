package io.github.redislock.core;

import java.util.function.Consumer;

/**
 * A handle on a lock type whose holding is one {@link LocalLock} per acquisition and key, shared by nested
 * acquisitions of the holding thread: the exclusive and the fair lock. It is held while that holding is still the
 * one it was handed (same fencing token) and valid.
 */
final class LocalLockHandle extends ThreadBoundHandle implements LockActivity.Leased {

    private final LocalLock lock;
    private final long token;
    /** How release errors name the lock type: {@code "Lock"} or {@code "Fair lock"}. */
    private final String type;
    /** What {@link #toString()} puts before the key: nothing for the exclusive lock, {@code "fair "}. */
    private final String kind;
    private final Consumer<LocalLock> release;
    /** Whether it was acquired with a fixed lease (not the watchdog's), which {@code extend} may replace. */
    private final boolean fixedLease;
    /** After a release that left the lock in Redis for its minimum hold: until when ({@link System#nanoTime()}), else 0. */
    private volatile long heldInRedisUntilNanos;
    /** Until when ({@link System#nanoTime()}) a release leaves the lock in Redis ({@code holdAtLeast}), else 0. */
    private volatile long holdUntilNanos;

    private LocalLockHandle(LocalLock lock, String type, String kind, boolean fixedLease, Consumer<LocalLock> release) {
        this.lock = lock;
        this.token = lock.token;
        this.type = type;
        this.kind = kind;
        this.fixedLease = fixedLease;
        this.release = release;
    }

    /**
     * A handle on the exclusive lock, acquired with a fixed lease or the watchdog's; {@code release} releases one hold
     * of the current thread.
     */
    static LocalLockHandle exclusive(LocalLock lock, boolean fixedLease, Consumer<LocalLock> release) {
        return new LocalLockHandle(lock, "Lock", "", fixedLease, release);
    }

    /** A handle on the fair lock; {@code release} releases one hold of the current thread. */
    static LocalLockHandle fair(LocalLock lock, Consumer<LocalLock> release) {
        return new LocalLockHandle(lock, "Fair lock", "fair ", false, release);
    }

    /**
     * Whether it was acquired with a fixed lease, which {@code extend} may replace; not with the watchdog's, also while
     * the watchdog does not renew it yet (a grant held from its message, until its confirmation).
     */
    boolean hasFixedLease() {
        return fixedLease;
    }

    @Override
    public LocalLock lease() {
        return lock;
    }

    /** Its release left the Redis lock to expire at {@code nanos} ({@link System#nanoTime()}): {@code holdAtLeast}. */
    void heldInRedisUntil(long nanos) {
        heldInRedisUntilNanos = nanos;
    }

    /** Until when ({@link System#nanoTime()}) a release leaves the lock in Redis, else 0. */
    long holdUntilNanos() {
        return holdUntilNanos;
    }

    void holdUntil(long nanos) {
        holdUntilNanos = nanos;
    }

    /** Whether this is a handle on the exclusive lock (not the fair one). */
    boolean isExclusive() {
        return kind.isEmpty();
    }

    /** The holding's token: the handle still stands for the lock's holding while the lock has it. */
    long token() {
        return token;
    }

    @Override
    public long heldInRedisUntilNanos() {
        return heldInRedisUntilNanos;
    }

    @Override
    public String key() {
        return lock.key;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public boolean isHeld() {
        return !released() && lock.token == token && lock.isValid();
    }

    @Override
    String subject() {
        return type + " '" + lock.key + "'";
    }

    @Override
    void releaseHold() {
        release.accept(lock);
    }

    @Override
    public String toString() {
        return "LockHandle[" + kind + lock.key + ", token " + token + (isHeld() ? ", held]" : ", not held]");
    }
}
