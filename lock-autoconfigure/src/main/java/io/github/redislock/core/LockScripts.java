package io.github.redislock.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.StreamUtils;

/**
 * The Lua scripts, read once from {@code io/github/redislock/*.lua} and run with EVALSHA (EVAL on NOSCRIPT),
 * and the typed calls the engine makes with them. The scripts take positional strings and answer with a
 * number whose sign or size carries its meaning; both are written and read here and nowhere else, so a
 * lock type calls {@link #acquire} and gets an {@link AcquireReply}, not {@code -ttl}.
 * <p>
 * Each script's text is read into memory at start-up rather than handed over as a resource: a
 * resource-backed {@code DefaultRedisScript} checks the file's modification time on every call, which
 * costs more than the script itself.
 */
final class LockScripts {

    static final RedisScript<Long> ACQUIRE = load("acquire");
    static final RedisScript<Long> RELEASE = load("release");
    static final RedisScript<Long> RENEW = load("renew");
    static final RedisScript<Long> LEAVE = load("leave");

    /** How long a fencing counter outlives the acquisition that set it; see {@code acquire.lua}. */
    static final long FENCE_GRACE_MILLIS = 1000;
    private static final String FENCE_GRACE = Long.toString(FENCE_GRACE_MILLIS);
    /** Waiting clients each release wakes: the longest-waiting, plus one in case that one is gone. */
    private static final String CLIENTS_WOKEN_PER_RELEASE = "2";
    /**
     * How long, after a release, the lock is kept for the clients it woke: long enough for a woken client to answer
     * on a busy machine, short enough that a woken client that died costs little. See release.lua.
     */
    private static final String TURN_MILLIS = "200";

    private final StringRedisTemplate redis;
    private final RedisLockKeys keys;
    private final String clientId;

    LockScripts(StringRedisTemplate redis, RedisLockKeys keys, String clientId) {
        this.redis = redis;
        this.keys = keys;
        this.clientId = clientId;
    }

    /**
     * What {@code acquire.lua} answered.
     *
     * @param token the fencing token when the caller holds the lock now, else 0
     * @param retryAfterMillis when it did not: how long the holder's lease has left, so the latest a waiter
     *        needs to look again if no release reaches it
     */
    record AcquireReply(long token, long retryAfterMillis) {

        /** The script returns the token (> 0) on success, else minus the lock's remaining TTL. */
        static AcquireReply of(Long reply) {
            long value = reply == null ? 0 : reply;
            return value > 0 ? new AcquireReply(value, 0) : new AcquireReply(0, -value);
        }

        boolean acquired() {
            return token > 0;
        }
    }

    /**
     * What {@code release.lua} answered.
     *
     * @param wasOwner whether the caller still held the lock in Redis (if not, nothing changed there)
     * @param handedOverToken the next holder's fencing token when the script handed the lock over, else 0
     */
    record ReleaseReply(boolean wasOwner, long handedOverToken) {

        static final ReleaseReply RELEASED = new ReleaseReply(true, 0);
        static final ReleaseReply NOT_OWNER = new ReleaseReply(false, 0);

        /** The script returns 1 when released, 0 when the caller was not the owner, else the next holder's token. */
        static ReleaseReply of(Long reply) {
            long value = reply == null ? 0 : reply;
            return value == 0 ? NOT_OWNER : value == 1 ? RELEASED : new ReleaseReply(true, value);
        }

        boolean handedOver() {
            return handedOverToken > 0;
        }
    }

    /**
     * Takes the lock for {@code owner}, or registers this client as waiting for it.
     *
     * @param sleepMillis how long the caller will sleep at most before asking again (0: it will not wait)
     * @param registered whether an earlier attempt may have registered this client (withdrawn on success)
     */
    AcquireReply acquire(String key, String owner, long leaseMillis, long sleepMillis, boolean registered) {
        return AcquireReply.of(redis.execute(ACQUIRE, allKeys(key), owner, Long.toString(leaseMillis), clientId,
                Long.toString(sleepMillis), FENCE_GRACE, registered ? "1" : "0", CLIENTS_WOKEN_PER_RELEASE));
    }

    /** Releases {@code owner}'s lock and wakes the clients that waited longest for it. */
    ReleaseReply release(String key, String owner) {
        return ReleaseReply.of(redis.execute(RELEASE, allKeys(key), owner, keys.wakeChannelPrefix(), key,
                CLIENTS_WOKEN_PER_RELEASE, "", "", "", "", TURN_MILLIS));
    }

    /**
     * Like {@link #release}, but hands the lock to {@code nextOwner} of this client (with a new fencing token and
     * {@code nextLeaseMillis}) when no other client waits for it.
     */
    ReleaseReply releaseOrHandOver(String key, String owner, String nextOwner, long nextLeaseMillis) {
        return ReleaseReply.of(redis.execute(RELEASE, allKeys(key), owner, keys.wakeChannelPrefix(), key,
                CLIENTS_WOKEN_PER_RELEASE, nextOwner, Long.toString(nextLeaseMillis), FENCE_GRACE, clientId, TURN_MILLIS));
    }

    /**
     * Extends {@code owner}'s lease to at least {@code leaseMillis}; never shortens it, so a late watchdog renewal
     * cannot cut short a longer lease set meanwhile.
     *
     * @return whether {@code owner} still holds the lock
     */
    boolean renew(String key, String owner, long leaseMillis) {
        return isOne(redis.execute(RENEW, List.of(keys.lock(key)), owner, Long.toString(leaseMillis)));
    }

    /**
     * Sets {@code owner}'s lease to exactly {@code leaseMillis}, also when shorter than what is left: the holder
     * choosing its own lease.
     *
     * @return whether {@code owner} still holds the lock
     */
    boolean setLease(String key, String owner, long leaseMillis) {
        return isOne(redis.execute(RENEW, List.of(keys.lock(key)), owner, Long.toString(leaseMillis), "exact"));
    }

    /** Withdraws this client from the clients waiting for the lock. */
    void leave(String key) {
        redis.execute(LEAVE, List.of(keys.waiters(key), keys.waiterExpiries(key)), clientId);
    }

    private static boolean isOne(Long reply) {
        return reply != null && reply == 1;
    }

    private List<String> allKeys(String key) {
        return List.of(keys.lock(key), keys.fence(key), keys.waiters(key), keys.waiterExpiries(key));
    }

    static RedisScript<Long> load(String name) {
        ClassPathResource resource = new ClassPathResource("io/github/redislock/" + name + ".lua");
        try {
            return RedisScript.of(StreamUtils.copyToString(resource.getInputStream(), StandardCharsets.UTF_8), Long.class);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read the lock script " + resource.getPath(), e);
        }
    }
}
