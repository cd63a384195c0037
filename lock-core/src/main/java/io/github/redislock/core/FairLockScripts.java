package io.github.redislock.core;

import java.util.List;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.LockScripts.ReleaseReply;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The fair lock's Redis calls ({@code fair_acquire.lua}, {@code fair_release.lua}), typed as {@link LockScripts}'
 * are; kept apart from them so the fair lock's timing constants live in one place.
 */
final class FairLockScripts {

    static final RedisScript<Long> FAIR_ACQUIRE = LockScripts.load("fair_acquire");
    static final RedisScript<Long> FAIR_RELEASE = LockScripts.load("fair_release");

    /**
     * How often a waiting thread refreshes its queue entry. It sleeps on pub/sub for the hand-over; the refresh
     * only proves it alive, and lets the head take a lock whose holder or grantee died.
     */
    static final long REFRESH_MILLIS = 150;
    /** How long a queue entry lives without a refresh: a dead waiter is dropped from the queue after this. */
    static final long ENTRY_TTL_MILLIS = 500;
    /**
     * How long a waiter the lock was handed to has to confirm it: a waiter that died after its last refresh holds
     * the lock this long at most. Below the fence grace, so the confirmation still finds its token.
     */
    static final long GRANT_MILLIS = 500;
    /**
     * How long a holder renewed by the watchdog that took the lock from the hand-over message waits before it confirms
     * it, so that a holder releasing sooner sends no confirmation at all. It confirms at the latest when half of
     * {@link #GRANT_MILLIS} has passed since its last request before the hand-over (the earliest the grant can have been
     * set): the confirmation then has the other half to reach Redis.
     */
    static final long CONFIRM_AFTER_MILLIS = 100;
    /**
     * Starts the wake-up message of a hand-over, before the waiter id. Lock keys cannot contain control
     * characters, so it is never taken for an exclusive lock's release notice (which is the key).
     */
    static final String HANDED_OVER = "\u0001";

    private static final String LEAVE = "leave";
    /** Clients waiting for the exclusive lock on the key that a release freeing it wakes, as an exclusive release does. */
    static final int EXCLUSIVE_CLIENTS_WOKEN = 2;

    // the arguments every call of a script sends alike, encoded once
    private static final byte[] ENTRY_TTL_BYTES = ScriptRunner.number(ENTRY_TTL_MILLIS);
    private static final byte[] FENCE_GRACE_BYTES = ScriptRunner.number(LockScripts.FENCE_GRACE_MILLIS);
    private static final byte[] GRANT_BYTES = ScriptRunner.number(GRANT_MILLIS);
    private static final byte[] HANDED_OVER_BYTES = ScriptRunner.bytes(HANDED_OVER);
    private static final byte[] EXCLUSIVE_CLIENTS_WOKEN_BYTES = ScriptRunner.number(EXCLUSIVE_CLIENTS_WOKEN);
    private static final byte[] LEAVE_BYTES = ScriptRunner.bytes(LEAVE);
    private static final byte[] CONFIRM = ScriptRunner.bytes("confirm");
    private static final byte[] WAITS = ScriptRunner.bytes("1");
    private static final byte[] TRIES_ONCE = ScriptRunner.bytes("0");
    private static final byte[] NOT_LEAVING = new byte[0];

    private final ScriptRunner redis;
    private final RedisLockKeys keys;

    FairLockScripts(StringRedisTemplate redis, RedisLockKeys keys) {
        this(new ScriptRunner(redis, RedisLockConfig.ReplicaAck.OFF), keys);
    }

    FairLockScripts(ScriptRunner redis, RedisLockKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /**
     * What {@code fair_acquire.lua} answered: the fencing token when the caller holds the lock, else when the request
     * that missed ran, by the Redis server's clock.
     *
     * @param missedAtMicros the server time of the miss in µs (0 when the caller holds the lock, or the answer was empty)
     */
    record Reply(long token, long missedAtMicros) {

        static Reply of(Long reply) {
            long value = reply == null ? 0 : reply;
            return value > 0 ? new Reply(value, 0) : new Reply(0, -value);
        }

        boolean acquired() {
            return token > 0;
        }

        /** As the wait loop takes it: a waiter refreshes its queue entry every {@value FairLockScripts#REFRESH_MILLIS} ms. */
        AcquireReply asAcquireReply() {
            return acquired() ? new AcquireReply(token, 0) : new AcquireReply(0, REFRESH_MILLIS);
        }
    }

    /**
     * Takes the lock if it is {@code waiter}'s turn (or confirms a hand-over to it), else queues it.
     *
     * @param waits whether the caller waits: queue it and refresh its entry (else a single try that leaves no trace)
     * @param attempt which attempt of the waiter's acquisition this is ({@link AttemptNumber})
     */
    Reply acquire(String key, String waiter, long leaseMillis, boolean waits, AttemptNumber attempt) {
        return Reply.of(redis.runAcknowledged(FAIR_ACQUIRE, keys.fairKeysEncoded(key), token -> token > 0,
                token -> release(key, waiter), "the acquisition", new byte[][] {ScriptRunner.bytes(waiter),
                        ScriptRunner.number(leaseMillis), waits ? WAITS : TRIES_ONCE, ENTRY_TTL_BYTES, FENCE_GRACE_BYTES,
                        attempt.numberBytes(), attempt.afterFailureBytes()}));
    }

    /** Gives up every attempt of {@code waiter}'s acquisition; see {@link LockStore#abandon}. */
    void abandon(String key, String waiter) {
        LockScripts.abandon(redis, keys, key, waiter);
    }

    /**
     * Whether a waiter may hold the lock as soon as the hand-over message reaches it, confirming in the background:
     * not when grants must be acknowledged by replicas first.
     */
    boolean grantsByMessage() {
        return !redis.acknowledges();
    }

    /**
     * Gives {@code owner}, which took the lock from the hand-over message, its full lease.
     *
     * @return whether the lock is still {@code owner}'s
     */
    boolean confirm(String key, String owner, long leaseMillis) {
        Long reply = redis.run(FAIR_ACQUIRE, keys.fairKeysEncoded(key), new byte[][] {ScriptRunner.bytes(owner),
                ScriptRunner.number(leaseMillis), CONFIRM, ENTRY_TTL_BYTES, FENCE_GRACE_BYTES});
        return reply != null && reply == 1;
    }

    /**
     * Releases {@code owner}'s lock, handing it to the next live waiter. A release that freed the key and woke some of
     * the clients waiting for the exclusive lock on it, not all, answers {@link ReleaseReply#turnKept()}: look at the
     * turn's end with {@link LockScripts#turnEnded}.
     */
    ReleaseReply release(String key, String owner) {
        return ReleaseReply.of(redis.run(FAIR_RELEASE, keys.fairReleaseKeysEncoded(key),
                releaseArgs(key, owner, NOT_LEAVING)));
    }

    /**
     * Extends {@code owner}'s lease to at least {@code leaseMillis} (the exclusive lock's {@code renew.lua}: the fair
     * lock is the same Redis key).
     *
     * @return whether {@code owner} still holds the lock
     */
    boolean renew(String key, String owner, long leaseMillis) {
        Long reply = redis.runAcknowledged(LockScripts.RENEW, List.of(keys.lock(key)), r -> r == 1, null, "the renewal",
                owner, Long.toString(leaseMillis));
        return reply != null && reply == 1;
    }

    /** The batched renewal for the watchdog ({@code renew-many.lua}), or {@code null} with replica acknowledgement. */
    Renewer.Many renewMany() {
        return BatchRenewal.of(redis, LockScripts.RENEW_MANY, key -> List.of(keys.lock(key)));
    }

    /** Withdraws {@code waiter} from the queue, handing the lock on if it was handed to it meanwhile (as {@link #release}). */
    ReleaseReply leave(String key, String waiter) {
        return ReleaseReply.of(redis.run(FAIR_RELEASE, keys.fairReleaseKeysEncoded(key), releaseArgs(key, waiter, LEAVE_BYTES)));
    }

    /**
     * The release script's arguments (its keys, {@link RedisLockKeys#fairReleaseKeysEncoded}, add the exclusive lock's
     * waiting clients: a release that frees the key wakes them too).
     */
    private byte[][] releaseArgs(String key, String owner, byte[] leaving) {
        return new byte[][] {ScriptRunner.bytes(owner), keys.wakeChannelPrefixEncoded(), HANDED_OVER_BYTES, GRANT_BYTES,
                FENCE_GRACE_BYTES, leaving, keys.nameEncoded(key), EXCLUSIVE_CLIENTS_WOKEN_BYTES};
    }
}
