package io.github.redislock.core;

import static io.github.redislock.core.ScriptRunner.NONE;
import static io.github.redislock.core.ScriptRunner.ONE;
import static io.github.redislock.core.ScriptRunner.ZERO;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

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
 * costs more than the script itself. Redis scripts cannot include files, so a script whose header comment has the
 * line {@code -- Uses lib/fence.lua.} gets the text of {@code lib/fence.lua} (its fencing-token function) put after
 * that header as it is read, and likewise {@code lib/waiters.lua} (registering, withdrawing and pruning waiters),
 * {@code lib/keep.lua} (keeping a semaphore's keys alive) and {@code lib/stale.lua} (refusing an acquisition request
 * its client gave up on):
 * what every lock type does alike is written once, and each script sent to Redis is still whole (and its SHA
 * covers the libraries). The header stays first, so a script still begins by saying what it does.
 */
final class LockScripts implements LockStore {

    /** A header line naming a library the script uses. */
    private static final Pattern USES = Pattern.compile("-- Uses (lib/[\\w-]+\\.lua)\\.");
    /** The libraries a script may use, by path; read before the scripts below, which {@link #load} builds with them. */
    private static final Map<String, String> LIBRARIES = Map.of(
            "lib/fence.lua", read("lib/fence.lua"),
            "lib/waiters.lua", read("lib/waiters.lua"),
            "lib/restart.lua", read("lib/restart.lua"),
            "lib/keep.lua", read("lib/keep.lua"),
            "lib/stale.lua", read("lib/stale.lua"));
    /** The names of the functions each library defines, to catch a script calling one without its header line. */
    private static final Map<String, List<String>> LIBRARY_FUNCTIONS = LIBRARIES.entrySet().stream().collect(
            Collectors.toMap(Map.Entry::getKey, library -> Pattern.compile("(?m)^local function (\\w+)")
                    .matcher(library.getValue()).results().map(match -> match.group(1)).toList()));

    static final RedisScript<Long> ACQUIRE = load("acquire");
    static final RedisScript<Long> RELEASE = load("release");
    static final RedisScript<Long> RENEW = load("renew");
    static final RedisScript<String> RENEW_MANY = load("renew-many", String.class);
    static final RedisScript<String> RW_READ_RENEW_MANY = load("rw-read-renew-many", String.class);
    static final RedisScript<String> REDLOCK_REPAIR_MANY = load("redlock-repair-many", String.class);
    static final RedisScript<Long> LEAVE = load("leave");
    static final RedisScript<Long> ABANDON = load("abandon");
    static final RedisScript<Long> TURN_ENDED = load("turn-ended");
    static final RedisScript<Long> RW_READ_ACQUIRE = load("rw-read-acquire");
    static final RedisScript<Long> RW_WRITE_ACQUIRE = load("rw-write-acquire");
    static final RedisScript<Long> RW_RELEASE = load("rw-release");
    static final RedisScript<Long> RW_RENEW = load("rw-renew");

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
    /** What {@link #abandon} records as the highest attempt given up: every attempt of the owner id. */
    private static final String EVERY_ATTEMPT = Integer.toString(Integer.MAX_VALUE);
    /** {@link #TURN_MILLIS} as a number: when the releasing client looks whether the turn was taken. */
    static final long TURN_MILLIS_VALUE = Long.parseLong(TURN_MILLIS);
    /**
     * How long a release's grant to the longest-waiting client lasts unless that client confirms it (release.lua): as
     * long as the fair lock's hand-over, for the same reasons ({@link FairLockScripts#GRANT_MILLIS}).
     */
    static final long GRANT_MILLIS = FairLockScripts.GRANT_MILLIS;
    /**
     * What starts a grant's message, and parts it: the token, the server time in ms modulo 2^39, the lock's name. Lock
     * names hold no control characters, and the other messages start with others (U+0001 a fair hand-over, U+0002 a
     * semaphore's, U+0003 a read/write lock's).
     */
    static final String GRANTED = "\u0004";
    /** The server times acquire.lua and release.lua tell a grant by are in ms modulo this. */
    static final long GRANT_CLOCK_MODULUS = 1L << 39;

    // the arguments every call of a script sends alike, encoded once
    private static final byte[] FENCE_GRACE_BYTES = ScriptRunner.bytes(FENCE_GRACE);
    private static final byte[] CLIENTS_WOKEN_PER_RELEASE_BYTES = ScriptRunner.bytes(CLIENTS_WOKEN_PER_RELEASE);
    private static final byte[] TURN_MILLIS_BYTES = ScriptRunner.bytes(TURN_MILLIS);
    private static final byte[] GRANT_MILLIS_BYTES = ScriptRunner.number(GRANT_MILLIS);
    private static final byte[] EXACT = ScriptRunner.bytes("exact");
    private static final byte[] READ = ScriptRunner.bytes("read");
    private static final byte[] WRITE = ScriptRunner.bytes("write");
    private static final byte[] LEAVE_AS_WRITER = ScriptRunner.bytes("leave");

    private final ScriptRunner redis;
    private final RedisLockKeys keys;
    private final String clientId;
    private final byte[] clientIdBytes;
    private final byte[] wakeChannelPrefixBytes;
    /** See {@link #grantsByMessage()}. */
    private final boolean grants;

    /** One Redlock node's scripts: its releases wake waiters and grant nothing (a grant needs a majority). */
    LockScripts(StringRedisTemplate redis, RedisLockKeys keys, String clientId) {
        this(new ScriptRunner(redis, RedisLockConfig.ReplicaAck.OFF), keys, clientId, false);
    }

    /** @param grants whether releases grant the lock to the longest-waiting client (see {@link #grantsByMessage()}) */
    LockScripts(ScriptRunner redis, RedisLockKeys keys, String clientId, boolean grants) {
        this.redis = redis;
        this.grants = grants && !redis.acknowledges();
        this.keys = keys;
        this.clientId = clientId;
        this.clientIdBytes = ScriptRunner.bytes(clientId);
        this.wakeChannelPrefixBytes = keys.wakeChannelPrefixEncoded();
    }

    /**
     * What {@code acquire.lua} answered.
     *
     * @param token the fencing token when the caller holds the lock now, else 0
     * @param retryAfterMillis when it did not: how long the holder's lease has left, so the latest a waiter
     *        needs to look again if no release reaches it
     * @param missedAt when it did not, and the caller takes grants from their message: the server time the request
     *        ran at, in ms modulo {@link #GRANT_CLOCK_MODULUS}; else -1
     */
    record AcquireReply(long token, long retryAfterMillis, long restartDelayLeftMillis, long missedAt) {

        /** What {@code acquire.lua} answers, less 2^40, on a Redlock node sitting out its restart delay. */
        private static final long RESTART_DELAY_REPLY = 1L << 40;
        /** A miss answered to a caller that takes grants: the TTL in the low 13 bits, the server time above them. */
        private static final int MISS_TTL_BITS = 13;

        AcquireReply(long token, long retryAfterMillis) {
            this(token, retryAfterMillis, 0, -1);
        }

        /** As {@link #of(Long)}, for a caller that takes grants from their message (acquire.lua's ARGV[9]). */
        static AcquireReply ofGranting(Long reply) {
            long value = reply == null ? 0 : reply;
            if (value >= 0) {
                return of(reply);
            }
            long miss = -value;
            return new AcquireReply(0, miss & ((1 << MISS_TTL_BITS) - 1), 0, miss >>> MISS_TTL_BITS);
        }

        /**
         * The script returns the token (> 0) on success, else minus the lock's remaining TTL, or on a Redlock node
         * in its restart delay minus (2^40 + the delay's remaining ms).
         */
        static AcquireReply of(Long reply) {
            long value = reply == null ? 0 : reply;
            if (value > 0) {
                return new AcquireReply(value, 0);
            }
            if (-value >= RESTART_DELAY_REPLY) {
                long left = -value - RESTART_DELAY_REPLY;
                return new AcquireReply(0, left, Math.max(left, 1), -1);
            }
            return new AcquireReply(0, -value);
        }

        /** Whether a Redlock node refused because it restarted or came back empty and sits out its restart delay. */
        boolean restarting() {
            return restartDelayLeftMillis > 0;
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
     * @param turnKept whether the lock was kept for the turn of the waiting clients it woke (see {@link #turnEnded})
     * @param registered whether the release registered this client as waiting behind the clients it woke (a
     *        {@link #releaseOrHandOver} that found other clients waiting)
     * @param registeredAt when it did, and grants by message: the server time the release ran at, in ms modulo
     *        {@link #GRANT_CLOCK_MODULUS}, as a miss tells it ({@link AcquireReply#missedAt()}); else -1
     */
    record ReleaseReply(boolean wasOwner, long handedOverToken, boolean turnKept, boolean registered, long registeredAt) {

        static final ReleaseReply RELEASED = new ReleaseReply(true, 0);
        static final ReleaseReply NOT_OWNER = new ReleaseReply(false, 0);
        static final ReleaseReply RELEASED_FOR_TURN = new ReleaseReply(true, 0, true, false, -1);

        ReleaseReply(boolean wasOwner, long handedOverToken) {
            this(wasOwner, handedOverToken, false, false, -1);
        }

        /**
         * The script returns 1 when released, 2 when released and kept for the woken clients' turn (or granted), minus
         * either (plus 4 times the server time, when it grants) when it also registered this client as waiting, 0 when
         * the caller was not the owner, else the next holder's token.
         */
        static ReleaseReply of(Long reply) {
            long value = reply == null ? 0 : reply;
            if (value < 0) {
                long registered = -value;
                return new ReleaseReply(true, 0, (registered & 3) == 2, true, registered > 3 ? registered >>> 2 : -1);
            }
            return value == 0 ? NOT_OWNER : value == 1 ? RELEASED : value == 2 ? RELEASED_FOR_TURN
                    : new ReleaseReply(true, value);
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
    @Override
    public AcquireReply acquire(String key, String owner, long leaseMillis, long sleepMillis, boolean registered,
            AttemptNumber attempt) {
        Long reply = redis.runAcknowledged(ACQUIRE, keys.exclusiveAcquireKeysEncoded(key), token -> token > 0,
                token -> release(key, owner), "the acquisition", new byte[][] {ScriptRunner.bytes(owner),
                        number(leaseMillis), clientIdBytes, number(sleepMillis), FENCE_GRACE_BYTES, registered ? ONE : ZERO,
                        CLIENTS_WOKEN_PER_RELEASE_BYTES, grants ? ONE : ZERO, attempt.numberBytes(),
                        attempt.afterFailureBytes()});
        return grants ? AcquireReply.ofGranting(reply) : AcquireReply.of(reply);
    }

    @Override
    public void abandon(String key, String owner) {
        abandon(redis, keys, key, owner);
    }

    /** {@link LockStore#abandon} for every lock type: its owner ids share the lock's abandoned set. */
    static void abandon(ScriptRunner redis, RedisLockKeys keys, String key, String owner) {
        redis.run(ABANDON, List.of(keys.abandoned(key)), owner, EVERY_ATTEMPT);
    }

    /**
     * A release grants the lock to the longest-waiting client and publishes the grant to it, whose waiting thread may
     * hold it from that message (see release.lua); not on a Redlock node, nor when grants must be acknowledged by
     * replicas first (that client's releases wake waiters for a turn, and its waiters ask).
     */
    @Override
    public boolean grantsByMessage() {
        return grants;
    }

    /** The owner id a release's grant to {@code clientId} gives the lock in Redis (release.lua). */
    static String grantOwner(String clientId, long token) {
        return clientId + ":grant:" + token;
    }

    /**
     * Like {@link #acquire}, on a Redlock node: a node without its restart marker ({@code marker}) came back empty or
     * is new, one whose marker another process of it wrote (another {@code run_id}) restarted, maybe from persisted
     * data; either grants nothing for {@code restartDelayMillis} (see {@code acquire.lua}).
     */
    AcquireReply redlockAcquire(String key, String owner, long leaseMillis, long sleepMillis, boolean registered,
            String marker, long restartDelayMillis) {
        byte[][] lockKeys = keys.exclusiveAcquireKeysEncoded(key);
        byte[][] withMarker = java.util.Arrays.copyOf(lockKeys, lockKeys.length + 1);
        withMarker[lockKeys.length] = ScriptRunner.bytes(marker);
        return AcquireReply.of(redis.run(ACQUIRE, withMarker, new byte[][] {ScriptRunner.bytes(owner), number(leaseMillis),
                clientIdBytes, number(sleepMillis), FENCE_GRACE_BYTES, registered ? ONE : ZERO, CLIENTS_WOKEN_PER_RELEASE_BYTES,
                number(restartDelayMillis), ONE, ZERO})); // a Redlock attempt has an owner id of its own: always the first
    }

    /** Releases {@code owner}'s lock and wakes the clients that waited longest for it. */
    /** One Redis hands the lock over to this JVM's next thread (reserved tokens, passes in memory). */
    @Override
    public boolean handsOver() {
        return true;
    }

    @Override
    public ReleaseReply release(String key, String owner) {
        return ReleaseReply.of(redis.run(RELEASE, keys.exclusiveKeysEncoded(key), new byte[][] {ScriptRunner.bytes(owner),
                wakeChannelPrefixBytes, keys.nameEncoded(key), CLIENTS_WOKEN_PER_RELEASE_BYTES, NONE, NONE, FENCE_GRACE_BYTES,
                NONE, TURN_MILLIS_BYTES, grants ? GRANT_MILLIS_BYTES : NONE}));
    }

    /**
     * Like {@link #release}, but hands the lock to {@code nextOwner} of this client (with a new fencing token and
     * {@code nextLeaseMillis}) when no other client waits for it. A hand-over too few replicas acknowledged is taken
     * back: the lock is then released, and the next thread acquires it afresh.
     *
     * @param reservedTokens how many fencing tokens the hand-over reserves for this client: the reply's token and the
     *        {@code reservedTokens - 1} after it, which no later holder of the key can get (1: just the next holder's)
     * @param nextSleepMillis when other clients wait (no hand-over), this client is registered as waiting behind them
     *        ({@link ReleaseReply#registered()}), for a next thread that sleeps this long at most before it asks
     */
    @Override
    public ReleaseReply releaseOrHandOver(String key, String owner, String nextOwner, long nextLeaseMillis, int reservedTokens,
            long nextSleepMillis) {
        try {
            return ReleaseReply.of(redis.runAcknowledged(RELEASE, keys.exclusiveKeysEncoded(key), reply -> reply > 2,
                    token -> release(key, nextOwner), "the hand-over", new byte[][] {ScriptRunner.bytes(owner),
                            wakeChannelPrefixBytes, keys.nameEncoded(key), CLIENTS_WOKEN_PER_RELEASE_BYTES,
                            ScriptRunner.bytes(nextOwner), number(nextLeaseMillis), FENCE_GRACE_BYTES, clientIdBytes,
                            TURN_MILLIS_BYTES, grants ? GRANT_MILLIS_BYTES : NONE,
                            reservedTokens == 1 ? ONE : number(reservedTokens), number(nextSleepMillis)}));
        } catch (ReplicaAckException e) {
            return ReleaseReply.RELEASED;
        }
    }

    /**
     * Extends {@code owner}'s lease to at least {@code leaseMillis}; never shortens it, so a late watchdog renewal
     * cannot cut short a longer lease set meanwhile.
     *
     * @return whether {@code owner} still holds the lock
     */
    @Override
    public boolean renew(String key, String owner, long leaseMillis) {
        return isOne(redis.runAcknowledged(RENEW, new byte[][] {ScriptRunner.bytes(keys.lock(key))}, LockScripts::isOne,
                null, "the renewal", new byte[][] {ScriptRunner.bytes(owner), number(leaseMillis)}));
    }

    /**
     * The watchdog's batched renewal of exclusive locks ({@code renew-many.lua}: each as {@link #renew}), or
     * {@code null} with replica acknowledgement, whose renewals are each acknowledged alone.
     */
    @Override
    public Renewer.Many renewMany() {
        return BatchRenewal.of(redis, RENEW_MANY, key -> List.of(keys.lock(key)));
    }

    /**
     * On a Redlock node, puts back in one call each holding its renewal found gone there, where the key is free
     * ({@code redlock-repair-many.lua}), also during the node's restart delay, keeping its restart marker ({@code
     * marker}) as {@link #redlockAcquire} does.
     *
     * @return per holding, in order, '1' when its owner holds it there now, '0' when another owner does
     */
    String redlockRepairMany(List<String> lockKeys, List<String> owners, List<Long> leaseMillis, String marker,
            long restartDelayMillis) {
        List<String> scriptKeys = new java.util.ArrayList<>(1 + 2 * lockKeys.size());
        scriptKeys.add(marker);
        String[] args = new String[2 + 2 * lockKeys.size()];
        args[0] = Long.toString(restartDelayMillis);
        args[1] = FENCE_GRACE;
        for (int i = 0; i < lockKeys.size(); i++) {
            scriptKeys.add(keys.lock(lockKeys.get(i)));
            scriptKeys.add(keys.fence(lockKeys.get(i)));
            args[2 + 2 * i] = owners.get(i);
            args[3 + 2 * i] = Long.toString(leaseMillis.get(i));
        }
        return redis.runForText(REDLOCK_REPAIR_MANY, scriptKeys, args);
    }

    /**
     * The watchdog's batched renewal of write locks ({@code renew-many.lua} on the writer key, which
     * {@code rw-renew.lua} renews the same way), or {@code null} with replica acknowledgement.
     */
    Renewer.Many renewManyWriteLocks() {
        return BatchRenewal.of(redis, RENEW_MANY, key -> List.of(keys.readWrite(key).get(0)));
    }

    /**
     * The watchdog's batched renewal of read shares ({@code rw-read-renew-many.lua}: each as {@link #readWriteRenew}
     * does a read share), or {@code null} with replica acknowledgement.
     */
    Renewer.Many renewManyReadShares() {
        return BatchRenewal.of(redis, RW_READ_RENEW_MANY, key -> {
            List<String> all = keys.readWrite(key);
            return List.of(all.get(1), all.get(2), all.get(4));
        });
    }

    @Override
    public boolean setLease(String key, String owner, String newOwner, long leaseMillis) {
        byte[][] args = owner.equals(newOwner)
                ? new byte[][] {ScriptRunner.bytes(owner), number(leaseMillis), EXACT}
                : new byte[][] {ScriptRunner.bytes(owner), number(leaseMillis), EXACT, ScriptRunner.bytes(newOwner)};
        return isOne(redis.runAcknowledged(RENEW, new byte[][] {ScriptRunner.bytes(keys.lock(key))}, LockScripts::isOne,
                null, "the lease change", args));
    }

    @Override
    public boolean holdUntilExpiry(String key, String owner, long holdMillis) {
        return setLease(key, owner, heldOnlyUntilExpiry(owner), holdMillis);
    }

    /**
     * The owner id a release's minimum hold leaves the lock under: {@code owner} with {@code :held} appended, which no
     * holding has, so nothing renews it or releases it.
     */
    private static String heldOnlyUntilExpiry(String owner) {
        return owner + ":held";
    }

    /**
     * Once the turn a release of this client kept for the woken clients should have ended: wakes every client still
     * waiting if none of them took the lock (see {@code turn-ended.lua}).
     *
     * @return how long until a turn that still runs (a later release's) ends, in ms, else 0
     */
    @Override
    public long turnEnded(String key) {
        Long reply = redis.run(TURN_ENDED, List.of(keys.lock(key), keys.waiters(key), keys.waiterExpiries(key)),
                keys.wakeChannelPrefix(), key, Long.toString(GRANT_MILLIS));
        return reply == null ? 0 : Math.max(reply, 0);
    }

    /** Withdraws this client from the clients waiting for the lock. */
    @Override
    public void leave(String key) {
        redis.run(LEAVE, List.of(keys.waiters(key), keys.waiterExpiries(key)), clientId);
    }

    /**
     * Takes a read share of {@code key}'s read/write lock for {@code owner}, or registers this client as waiting.
     *
     * @param downgradingWriter the owner id of the caller's own write lock on the key, or {@code ""}
     * @param attempt which attempt of the acquisition this is ({@link AttemptNumber})
     * @return the read epoch's token when it reads now
     */
    AcquireReply readAcquire(String key, String owner, long leaseMillis, long sleepMillis, String downgradingWriter,
            AttemptNumber attempt) {
        return AcquireReply.of(redis.runAcknowledged(RW_READ_ACQUIRE, keys.readWriteAcquireEncoded(key), token -> token > 0,
                token -> readWriteRelease(key, owner, false), "the acquisition", new byte[][] {ScriptRunner.bytes(owner),
                        number(leaseMillis), clientIdBytes, number(sleepMillis), FENCE_GRACE_BYTES,
                        downgradingWriter.isEmpty() ? NONE : ScriptRunner.bytes(downgradingWriter), attempt.numberBytes(),
                        attempt.afterFailureBytes()}));
    }

    /**
     * Takes the write side of {@code key}'s read/write lock for {@code owner}, or marks it as a waiting writer, as
     * attempt {@code attempt} of the acquisition ({@link AttemptNumber}).
     */
    AcquireReply writeAcquire(String key, String owner, long leaseMillis, long sleepMillis, AttemptNumber attempt) {
        return AcquireReply.of(redis.runAcknowledged(RW_WRITE_ACQUIRE, keys.readWriteAcquireEncoded(key), token -> token > 0,
                token -> readWriteRelease(key, owner, true), "the acquisition", new byte[][] {ScriptRunner.bytes(owner),
                        number(leaseMillis), clientIdBytes, number(sleepMillis), FENCE_GRACE_BYTES, wakeChannelPrefixBytes,
                        ScriptRunner.bytes(ReadWriteLocks.writerWaits(key)), attempt.numberBytes(),
                        attempt.afterFailureBytes()}));
    }

    /**
     * Releases {@code owner}'s read share ({@code write} false) or write lock, waking waiting clients if one may enter.
     *
     * @return whether {@code owner} still held it in Redis (if not, nothing changed there)
     */
    boolean readWriteRelease(String key, String owner, boolean write) {
        return isOne(redis.run(RW_RELEASE, keys.readWriteEncoded(key), new byte[][] {ScriptRunner.bytes(owner),
                write ? WRITE : READ, wakeChannelPrefixBytes, keys.nameEncoded(key)}));
    }

    /** Withdraws a writer that stopped waiting, so the readers it held back may enter. */
    void leaveAsWriter(String key, String owner) {
        redis.run(RW_RELEASE, keys.readWriteEncoded(key), new byte[][] {ScriptRunner.bytes(owner), LEAVE_AS_WRITER,
                wakeChannelPrefixBytes, keys.nameEncoded(key)});
    }

    /**
     * Extends {@code owner}'s read share or write lease to at least {@code leaseMillis}.
     *
     * @return whether {@code owner} still holds it
     */
    boolean readWriteRenew(String key, String owner, boolean write, long leaseMillis) {
        return readWriteRenewal(key, owner, write, leaseMillis) >= 1;
    }

    /**
     * Extends {@code owner}'s read share or write lease to at least {@code leaseMillis}.
     *
     * @return 1 when renewed, 2 when a read share was renewed and a writer waits, 0 when {@code owner} no longer holds it
     */
    long readWriteRenewal(String key, String owner, boolean write, long leaseMillis) {
        Long reply = redis.runAcknowledged(RW_RENEW, keys.readWriteEncoded(key), renewed -> renewed >= 1, null,
                "the renewal", new byte[][] {ScriptRunner.bytes(owner), write ? WRITE : READ, number(leaseMillis)});
        return reply == null ? 0 : reply;
    }

    private static byte[] number(long value) {
        return ScriptRunner.number(value);
    }

    private static boolean isOne(Long reply) {
        return reply != null && reply == 1;
    }

    private static boolean isOne(long reply) {
        return reply == 1;
    }

    /**
     * Reads {@code io/github/redislock/<name>.lua}, with each library its header comment names in a line
     * {@code -- Uses lib/<library>.lua.} put after that header, in the order named.
     *
     * @throws IllegalStateException when the script names a library that does not exist, or calls a library's
     *         function without naming the library
     */
    static RedisScript<Long> load(String name) {
        return load(name, Long.class);
    }

    /** Like {@link #load(String)}, for a script answering with a {@code resultType}. */
    static <T> RedisScript<T> load(String name, Class<T> resultType) {
        String script = read(name + ".lua");
        int headerEnd = 0;
        while (script.startsWith("--", headerEnd)) {
            int lineEnd = script.indexOf('\n', headerEnd);
            headerEnd = lineEnd < 0 ? script.length() : lineEnd + 1;
        }
        String header = script.substring(0, headerEnd);
        String body = script.substring(headerEnd);
        StringBuilder whole = new StringBuilder(header);
        List<String> used = header.lines().map(USES::matcher).filter(Matcher::matches).map(match -> match.group(1)).toList();
        for (String library : used) {
            String text = LIBRARIES.get(library);
            if (text == null) {
                throw new IllegalStateException("The lock script " + name + ".lua uses " + library + ", which does not exist; "
                        + "libraries: " + LIBRARIES.keySet());
            }
            whole.append(text);
        }
        LIBRARY_FUNCTIONS.forEach((library, functions) -> functions.stream()
                .filter(function -> !used.contains(library) && body.contains(function + "("))
                .findFirst().ifPresent(function -> {
                    throw new IllegalStateException("The lock script " + name + ".lua calls " + function + " but its header "
                            + "comment lacks the line '-- Uses " + library + ".' that adds " + library);
                }));
        return RedisScript.of(whole.append(body).toString(), resultType);
    }

    private static String read(String path) {
        ClassPathResource resource = new ClassPathResource("io/github/redislock/" + path);
        try {
            return StreamUtils.copyToString(resource.getInputStream(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not read the lock script " + resource.getPath(), e);
        }
    }
}
