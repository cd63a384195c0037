package io.github.redislock.core;

import static io.github.redislock.core.ScriptRunner.NONE;
import static io.github.redislock.core.ScriptRunner.ONE;
import static io.github.redislock.core.ScriptRunner.ZERO;

import java.time.Duration;
import java.util.List;

import io.github.redislock.core.LockScripts.AcquireReply;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The semaphore's Redis calls, typed as {@link LockScripts} types the exclusive lock's: the {@code semaphore-*.lua}
 * scripts, each touching only the semaphore's own keys (one hash tag, so one slot).
 */
final class SemaphoreScripts {

    static final RedisScript<Long> ACQUIRE = LockScripts.load("semaphore-acquire");
    static final RedisScript<Long> RELEASE = LockScripts.load("semaphore-release");
    static final RedisScript<Long> RENEW = LockScripts.load("semaphore-renew");
    static final RedisScript<String> RENEW_MANY = LockScripts.load("semaphore-renew-many", String.class);
    static final RedisScript<Long> PERMITS = LockScripts.load("semaphore-permits");
    static final RedisScript<Long> LOOK = LockScripts.load("semaphore-look");

    /**
     * How long a semaphore's permit limit stays in Redis after its last use: a limit changed with
     * {@link RedisSemaphore#setPermits} outlives quiet spells, yet a semaphore no longer used leaves nothing behind.
     */
    static final Duration LIMIT_RETENTION = Duration.ofDays(1);
    private static final String RETENTION = Long.toString(LIMIT_RETENTION.toMillis());
    private static final String FENCE_GRACE = Long.toString(LockScripts.FENCE_GRACE_MILLIS);
    /**
     * Waiting threads a release wakes (one message per client): a release may free permits for several, and
     * a woken thread that needs more than is free waits on.
     */
    static final int WAITERS_WOKEN_PER_RELEASE = 16;
    private static final String THREADS_WOKEN_PER_RELEASE = Integer.toString(WAITERS_WOKEN_PER_RELEASE);

    // the arguments every call of a script sends alike, encoded once
    private static final byte[] RETENTION_BYTES = ScriptRunner.bytes(RETENTION);
    private static final byte[] FENCE_GRACE_BYTES = ScriptRunner.bytes(FENCE_GRACE);
    private static final byte[] THREADS_WOKEN_PER_RELEASE_BYTES = ScriptRunner.bytes(THREADS_WOKEN_PER_RELEASE);

    private final ScriptRunner redis;
    private final RedisLockKeys keys;

    SemaphoreScripts(StringRedisTemplate redis, RedisLockKeys keys) {
        this(new ScriptRunner(redis, RedisLockConfig.ReplicaAck.OFF), keys);
    }

    SemaphoreScripts(ScriptRunner redis, RedisLockKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /**
     * Takes {@code permits} for {@code holder}, or registers {@code waiter} as waiting for permits.
     *
     * @param initialLimit the limit to store when Redis has none for this semaphore
     * @param sleepMillis how long the caller will sleep at most before asking again (0: it will not wait)
     * @param registered whether an earlier attempt may have registered {@code waiter} (withdrawn on success)
     */
    AcquireReply acquire(String key, String holder, int permits, long leaseMillis, int initialLimit, String waiter,
            long sleepMillis, boolean registered) {
        return acquire(key, holder, permits, leaseMillis, initialLimit, waiter, sleepMillis, registered,
                AttemptNumber.FIRST);
    }

    /** Like {@link #acquire(String, String, int, long, int, String, long, boolean)}, as attempt {@code attempt}. */
    AcquireReply acquire(String key, String holder, int permits, long leaseMillis, int initialLimit, String waiter,
            long sleepMillis, boolean registered, AttemptNumber attempt) {
        return AcquireReply.of(redis.runAcknowledged(ACQUIRE, keys.semaphoreAcquireKeysEncoded(key), token -> token > 0,
                token -> release(key, holder, SemaphorePermits.wakeName(key)), "the acquisition", new byte[][] {
                        ScriptRunner.bytes(holder), ScriptRunner.number(permits), ScriptRunner.number(leaseMillis),
                        ScriptRunner.number(initialLimit), RETENTION_BYTES, ScriptRunner.bytes(waiter),
                        ScriptRunner.number(sleepMillis), FENCE_GRACE_BYTES, registered ? ONE : ZERO,
                        attempt.numberBytes(), attempt.afterFailureBytes()}));
    }

    /** Gives up every attempt of {@code holder}'s acquisition; see {@link LockStore#abandon}. */
    void abandon(String key, String holder) {
        LockScripts.abandon(redis, keys, key, holder);
    }

    /**
     * Returns {@code holder}'s permits and wakes the threads waiting longest.
     *
     * @param wakeName what the woken clients' {@link LocalLocks} know the semaphore's waiters by
     * @return the reply: whether {@code holder} still had them (its lease had not ended), and whether to {@link #look}
     *         later
     */
    HandOverReply release(String key, String holder, String wakeName) {
        Long reply = runRelease(key, holder, wakeName, "", 0, 0, "", false, 0);
        return HandOverReply.of(reply == null ? 0 : reply);
    }

    /**
     * A turn's time after a release that did not wake every waiting client ({@link HandOverReply#lookLater()}): if
     * permits are still free, wakes every client still waiting ({@code semaphore-look.lua}).
     */
    void look(String key, String wakeName) {
        redis.run(LOOK, List.of(keys.semaphoreHolders(key), keys.semaphorePermits(key), keys.semaphoreLimit(key),
                keys.semaphoreWaiters(key), keys.semaphoreWaiterExpiries(key)), keys.wakeChannelPrefix(), wakeName);
    }

    /**
     * Returns {@code holder}'s permits and, when no other client has waited longer and they fit, hands permits in the
     * same call to {@code next}, the releasing client's next waiting thread; else wakes the threads waiting longest.
     *
     * @param clientWaiter the releasing client's waiter id ({@code next}'s waiter entry)
     * @param moreWaiting whether more threads of the client wait after {@code next}: its waiter entry then stays,
     *        at the back of the queue, for {@code entryMillis}
     * @return the reply; with replica acknowledgement, a hand-over too few replicas acknowledged is taken back (the
     *         permits are released, and the next thread asks Redis itself) and answered as
     *         {@link HandOverReply#unacknowledged()}
     */
    HandOverReply releaseAndHandOver(String key, String holder, String wakeName, String next, int nextPermits,
            long nextLeaseMillis, String clientWaiter, boolean moreWaiting, long entryMillis) {
        long[] unacknowledged = {0};
        try {
            // a hand-over grants permits like an acquisition does: acknowledged alike, or a failover to a replica
            // that never got it would grant the same permits again
            Long reply = redis.runAcknowledged(RELEASE, keys.semaphoreReleaseKeysEncoded(key),
                    handedOver -> HandOverReply.of(handedOver).handedOver(), handedOver -> {
                        unacknowledged[0] = handedOver;
                        release(key, next, wakeName);
                    }, "the hand-over", releaseArgs(holder, wakeName, next, nextPermits, nextLeaseMillis, clientWaiter,
                            moreWaiting, entryMillis));
            return HandOverReply.of(reply == null ? 0 : reply);
        } catch (ReplicaAckException e) {
            return new HandOverReply(HandOverReply.of(unacknowledged[0]).wasHolder(), 0, false, true, false);
        }
    }

    private Long runRelease(String key, String holder, String wakeName, String next, int nextPermits,
            long nextLeaseMillis, String clientWaiter, boolean moreWaiting, long entryMillis) {
        return redis.run(RELEASE, keys.semaphoreReleaseKeysEncoded(key), releaseArgs(holder, wakeName, next, nextPermits,
                nextLeaseMillis, clientWaiter, moreWaiting, entryMillis));
    }

    private byte[][] releaseArgs(String holder, String wakeName, String next, int nextPermits, long nextLeaseMillis,
            String clientWaiter, boolean moreWaiting, long entryMillis) {
        return new byte[][] {ScriptRunner.bytes(holder), keys.wakeChannelPrefixEncoded(), ScriptRunner.bytes(wakeName),
                THREADS_WOKEN_PER_RELEASE_BYTES, next.isEmpty() ? NONE : ScriptRunner.bytes(next),
                ScriptRunner.number(nextPermits), ScriptRunner.number(nextLeaseMillis), FENCE_GRACE_BYTES,
                clientWaiter.isEmpty() ? NONE : ScriptRunner.bytes(clientWaiter), moreWaiting ? ONE : ZERO,
                ScriptRunner.number(entryMillis), RETENTION_BYTES};
    }

    /**
     * What {@code semaphore-release.lua} answered when asked to hand over.
     *
     * @param wasHolder whether the releasing holder still had its permits
     * @param token the next thread's fencing token when it was handed permits, else 0
     * @param full whether no permit was left free after the hand-over
     * @param unacknowledged whether too few replicas acknowledged a hand-over, which was taken back (or, if taking it
     *        back failed too, is ended by its lease)
     * @param lookLater whether the release may not have woken every waiting client (more waited than it wakes, or a
     *        hand-over left permits free): {@link #look} a turn's time later
     */
    record HandOverReply(boolean wasHolder, long token, boolean full, boolean unacknowledged, boolean lookLater) {

        static HandOverReply of(long reply) {
            if (reply >= 0 && reply <= 3) { // no hand-over: 1 or 0 whether the holder still had permits, + 2 to look later
                return new HandOverReply(reply % 2 == 1, 0, false, false, reply >= 2);
            }
            long magnitude = Math.abs(reply);
            boolean full = magnitude % 2 == 1;
            return new HandOverReply(reply > 0, magnitude / 2, full, false, !full);
        }

        boolean handedOver() {
            return token > 0;
        }
    }

    /**
     * Extends {@code holder}'s lease to at least {@code leaseMillis}, never shortening it.
     *
     * @return whether {@code holder} still has its permits
     */
    boolean renew(String key, String holder, long leaseMillis) {
        return isOne(redis.runAcknowledged(RENEW, List.of(keys.semaphoreHolders(key), keys.semaphorePermits(key),
                keys.semaphoreLimit(key)), reply -> reply == 1, null, "the renewal", holder, Long.toString(leaseMillis), RETENTION));
    }

    /**
     * The watchdog's batched renewal of permits ({@code semaphore-renew-many.lua}: each as {@link #renew}), or
     * {@code null} with replica acknowledgement.
     */
    Renewer.Many renewMany() {
        return BatchRenewal.of(redis, RENEW_MANY, key -> List.of(keys.semaphoreHolders(key), keys.semaphorePermits(key),
                keys.semaphoreLimit(key)), RETENTION);
    }

    /** The permits free now; {@code initialLimit} counts as the limit when Redis has none stored. */
    int available(String key, int initialLimit) {
        return permits(key, "available", initialLimit, "");
    }

    /** Stores a new limit, keeping every holder's permits, and wakes the waiters; returns the permits free now. */
    int setLimit(String key, int limit, String wakeName) {
        return permits(key, "set", limit, wakeName);
    }

    /** Withdraws {@code waiter} from the threads waiting for permits. */
    void leave(String key, String waiter) {
        redis.run(LockScripts.LEAVE, List.of(keys.semaphoreWaiters(key), keys.semaphoreWaiterExpiries(key)), waiter);
    }

    private int permits(String key, String mode, int limit, String wakeName) {
        Long free = redis.run(PERMITS, List.of(keys.semaphoreHolders(key), keys.semaphorePermits(key),
                keys.semaphoreLimit(key), keys.semaphoreWaiters(key), keys.semaphoreWaiterExpiries(key)), mode,
                Integer.toString(limit), RETENTION, keys.wakeChannelPrefix(), wakeName, THREADS_WOKEN_PER_RELEASE);
        return free == null ? 0 : free.intValue();
    }

    private static boolean isOne(Long reply) {
        return reply != null && reply == 1;
    }
}
