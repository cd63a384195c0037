package io.github.redislock.core;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.LockScripts.ReleaseReply;
import org.jspecify.annotations.Nullable;

/**
 * Where the exclusive lock lives: the boundary {@link ExclusiveLock} and the {@link Watchdog} use, whatever holds the
 * lock. {@link LockScripts} is one Redis (standalone, Sentinel or Cluster), each call one script; {@link RedlockStore}
 * is a quorum of independent masters, each call sent to every node and settled by a majority. Every call keeps the
 * meaning of the single-Redis script of the same name.
 */
interface LockStore {

    /**
     * Takes the lock for {@code owner}, or registers this client as waiting for it.
     *
     * @param sleepMillis how long the caller will sleep at most before asking again (0: it will not wait)
     * @param registered whether an earlier attempt may have registered this client (withdrawn on success)
     * @throws org.springframework.dao.DataAccessException when the store could not be reached; the request may still land
     */
    default AcquireReply acquire(String key, String owner, long leaseMillis, long sleepMillis, boolean registered) {
        return acquire(key, owner, leaseMillis, sleepMillis, registered, AttemptNumber.FIRST);
    }

    /**
     * Like {@link #acquire(String, String, long, long, boolean)}, as attempt {@code attempt} of {@code owner}'s
     * acquisition: after a failed attempt, the attempts before it change nothing if they land later.
     */
    AcquireReply acquire(String key, String owner, long leaseMillis, long sleepMillis, boolean registered,
            AttemptNumber attempt);

    /**
     * Gives up every attempt of {@code owner}'s acquisition, after one failed: a request of it still on its way changes
     * nothing when it lands. The caller then releases what an attempt that landed earlier may have taken.
     */
    void abandon(String key, String owner);

    /**
     * Whether a release grants the lock to the longest-waiting client, whose waiting thread may hold it from the grant's
     * message ({@link AcquireReply#missedAt()} tells it whether a grant is new enough); see release.lua.
     */
    default boolean grantsByMessage() {
        return false;
    }

    /** Releases {@code owner}'s lock and wakes the clients that waited longest for it (or grants it, see {@link #grantsByMessage}). */
    ReleaseReply release(String key, String owner);

    /**
     * Whether a release may hand the lock to the next thread of this JVM ({@link #releaseOrHandOver}) and the lock
     * then pass from thread to thread in memory with reserved fencing tokens.
     */
    boolean handsOver();

    /**
     * Like {@link #release}, but hands the lock to {@code nextOwner} when no other client waits; see {@link #handsOver}.
     * When others wait, it may register this client as waiting behind them ({@link ReleaseReply#registered()}), for a
     * next thread that sleeps at most {@code nextSleepMillis} before it asks.
     */
    ReleaseReply releaseOrHandOver(String key, String owner, String nextOwner, long nextLeaseMillis, int reservedTokens,
            long nextSleepMillis);

    /** Extends {@code owner}'s lease to at least {@code leaseMillis}; whether it still held the lock. */
    boolean renew(String key, String owner, long leaseMillis);

    /** The watchdog's batched renewal, or {@code null} when each lock is renewed alone. */
    Renewer.@Nullable Many renewMany();

    /**
     * Sets {@code owner}'s lease to exactly {@code leaseMillis}, also when shorter than what is left: a holder choosing
     * its own fixed lease. With a {@code newOwner} other than {@code owner} the lock is held under that owner id from
     * now on, so a watchdog renewal of {@code owner} still on its way cannot stretch the lease to its own.
     *
     * @return whether {@code owner} still held the lock
     */
    boolean setLease(String key, String owner, String newOwner, long leaseMillis);

    /**
     * A release's minimum hold ({@code holdAtLeast}): leaves {@code owner}'s lock in Redis to expire in exactly
     * {@code holdMillis}, held by nobody: under an owner id no renewal names, so one still on its way cannot stretch it
     * to a whole lease.
     *
     * @return whether {@code owner} still held the lock
     */
    boolean holdUntilExpiry(String key, String owner, long holdMillis);

    /** Withdraws this client from the clients waiting for the lock. */
    void leave(String key);

    /**
     * Once the turn a release kept for the woken clients should have ended: wakes every client still waiting if none
     * took the lock; how long until a later turn ends, in ms, else 0.
     */
    long turnEnded(String key);
}
