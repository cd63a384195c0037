package io.github.redislock.core;

import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * One acquisition of a {@link RedlockTemplate} lock: the outermost one, which holds the lock on a majority of the
 * nodes, or a nested one of the same thread, which shares its token and only counts the hold down on release.
 */
final class RedlockHandle implements LockHandle {

    private final String key;
    private final String owner;
    private final long token;
    private final Thread thread = Thread.currentThread();
    private final RedlockHandle outer;
    private final Consumer<RedlockHandle> release;
    private volatile long validUntilNanos;
    private volatile String lostReason;
    private volatile String renewalTrouble;
    private volatile ScheduledFuture<?> renewal;
    private boolean released;
    private Runnable awaitLateGrants = () -> { };

    private RedlockHandle(String key, String owner, long token, long validUntilNanos, RedlockHandle outer,
            Consumer<RedlockHandle> release) {
        this.key = key;
        this.owner = owner;
        this.token = token;
        this.validUntilNanos = validUntilNanos;
        this.outer = outer;
        this.release = release;
    }

    static RedlockHandle outermost(String key, String owner, long token, long validUntilNanos, Consumer<RedlockHandle> release) {
        return new RedlockHandle(key, owner, token, validUntilNanos, null, release);
    }

    /** A nested acquisition by the holding thread. */
    RedlockHandle nested(Consumer<RedlockHandle> release) {
        return new RedlockHandle(key, owner, token, 0, this, release);
    }

    @Override
    public String key() {
        return key;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    @Override
    public boolean isHeld() {
        if (outer != null) {
            return !released && outer.isHeld();
        }
        return !released && lostReason == null && System.nanoTime() - validUntilNanos < 0;
    }

    @Override
    public void release() {
        if (Thread.currentThread() != thread) {
            throw new IllegalMonitorStateException("Lock '" + key + "' was acquired by thread '" + thread.getName()
                    + "' and cannot be released by thread '" + Thread.currentThread().getName() + "'");
        }
        if (released) {
            throw new IllegalMonitorStateException("Lock '" + key + "' (fencing token " + token + ") was already released");
        }
        released = true;
        release.accept(this);
    }

    boolean isOutermost() {
        return outer == null;
    }

    String owner() {
        return owner;
    }

    boolean isReleased() {
        return released;
    }

    long validUntilNanos() {
        return validUntilNanos;
    }

    /** @param trouble why the last renewal did not reach a majority, or {@code null} when it did */
    void renewed(long validUntilNanos, String trouble) {
        this.validUntilNanos = validUntilNanos;
        this.renewalTrouble = trouble;
    }

    String renewalTrouble() {
        return renewalTrouble;
    }

    /** @return whether this call marked it lost (it was not already) */
    synchronized boolean lost(String reason) {
        if (lostReason != null) {
            return false;
        }
        lostReason = reason;
        cancelRenewal();
        return true;
    }

    /** Why it was lost, or {@code null}; a fixed lease that ran out counts as lost from then. */
    String lostReason() {
        String reason = lostReason;
        if (reason == null && System.nanoTime() - validUntilNanos >= 0) {
            return "its lease ran out before it was renewed or released";
        }
        return reason;
    }

    /** Set by the acquiring thread; see {@link RedlockNodes.Attempt#awaitLateReplies()}. */
    void awaitLateGrants(Runnable awaitLateGrants) {
        this.awaitLateGrants = awaitLateGrants;
    }

    /** Called by the releasing thread, which is the acquiring one. */
    void awaitLateGrants() {
        awaitLateGrants.run();
        awaitLateGrants = () -> { };
    }

    void renewal(ScheduledFuture<?> renewal) {
        this.renewal = renewal;
    }

    void cancelRenewal() {
        ScheduledFuture<?> scheduled = renewal;
        if (scheduled != null) {
            scheduled.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "RedlockHandle[" + key + ", token " + token + (isHeld() ? ", held]" : ", not held]");
    }
}
