package io.github.redislock.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.util.ClassUtils;

/**
 * Runs the lock scripts, and is the one place that knows about replica acknowledgement
 * ({@link RedisLockConfig.ReplicaAck}).
 * <p>
 * With it on, a script that grants or extends a lock is followed by {@code WAIT replicas timeout}. WAIT cannot run
 * inside Lua, and it waits for the writes of the connection it is sent on, so both go in one pipeline: a pipeline
 * keeps to one connection with every driver Spring Data Redis offers (a pooled Jedis connection; Jedis's
 * {@code UnifiedJedis}, whose plain calls may each take another pooled connection; and Lettuce, whose plain calls
 * share one native connection that a blocking WAIT would stall for every caller of the application, while its
 * pipelines run on a dedicated connection). Redis Cluster is refused: its WAIT answers for one shard's replicas only,
 * and the cluster connection cannot promise the WAIT reaches the node that ran the script.
 * <p>
 * Without acknowledgement, a script runs with EVALSHA (EVAL when Redis answers NOSCRIPT), as
 * {@link StringRedisTemplate#execute(RedisScript, List, Object...)} does, but straight on a connection of the
 * template's factory with the keys and arguments encoded once: the template's own path wraps every call's connection
 * in a new proxy and a {@code DefaultStringRedisConnection} and serializes through its serializers, which cost more
 * client time than the script call itself (measured with JFR on the uncontended lock+unlock path). On a Lettuce
 * factory that shares its native connection (Spring Boot's default), {@link LettuceScriptCalls} sends the script on
 * that connection itself, skipping Spring Data Redis's per-call connection object too; on a Jedis factory with a
 * shared {@code UnifiedJedis} client (the default with Jedis 7, not Cluster), {@link JedisScriptCalls} sends it on
 * that client. That connection is
 * the factory's own, never one bound to the caller's thread: a lock takes effect at once, also inside a Redis
 * transaction of the caller's. A template of a subclass (one that records or traces its script calls, say) still
 * sees every call: its {@code execute} is used as it is.
 */
final class ScriptRunner {

    /** The script arguments the lock types share, encoded once (never written to). */
    static final byte[] ONE = bytes("1");
    static final byte[] ZERO = bytes("0");
    static final byte[] NONE = new byte[0];
    /** Recently sent numbers, encoded ({@link #number}). */
    private static final EncodedNumber[] RECENT_NUMBERS = new EncodedNumber[64];

    private static final Logger log = LoggerFactory.getLogger(ScriptRunner.class);
    private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
            ScriptRunner.class.getClassLoader());
    private static final boolean JEDIS_PRESENT = ClassUtils.isPresent("redis.clients.jedis.JedisCluster",
            ScriptRunner.class.getClassLoader());

    private final StringRedisTemplate redis;
    /** Whether scripts run straight on the factory's connections (a plain template) or through its execute. */
    private final boolean direct;
    /** Script calls on a Lettuce factory's shared native connection; {@code null} for other factories. */
    private final LettuceScriptCalls lettuce;
    /** Script calls on a Jedis factory's shared {@code UnifiedJedis} client; {@code null} for other factories. */
    private final JedisScriptCalls jedis;
    /** Each script's SHA-1 and text as bytes, worked out once (DefaultRedisScript locks for every getSha1). */
    private final Map<RedisScript<?>, Prepared> prepared = new ConcurrentHashMap<>();
    private final RedisLockConfig.ReplicaAck replicaAck;
    private final byte[][] waitArgs;
    /** Which master serves each hash slot, for the watchdog (Redis Cluster only; looked up when first asked). */
    final ClusterNodes clusterNodes;
    /** Whether the connections are Redis Cluster ones; {@code null} until a connection was asked. */
    private volatile Boolean cluster;

    ScriptRunner(StringRedisTemplate redis, RedisLockConfig.ReplicaAck replicaAck) {
        this.redis = redis;
        this.direct = redis.getClass() == StringRedisTemplate.class;
        this.lettuce = direct && LETTUCE_PRESENT ? LettuceScriptCalls.on(redis.getRequiredConnectionFactory()) : null;
        this.jedis = direct && JEDIS_PRESENT ? JedisScriptCalls.on(redis.getRequiredConnectionFactory()) : null;
        this.replicaAck = replicaAck;
        this.clusterNodes = new ClusterNodes(redis);
        this.waitArgs = new byte[][] {bytes(Integer.toString(replicaAck.replicas())),
                bytes(Long.toString(replicaAck.timeout().toMillis()))};
    }

    /** Whether grants and renewals wait for replicas to acknowledge them (redis-lock.replica-ack). */
    boolean acknowledges() {
        return replicaAck.enabled();
    }

    /** Whether scripts run on a Lettuce factory's shared native connection ({@link LettuceScriptCalls}). */
    boolean onSharedLettuceConnection() {
        return lettuce != null;
    }

    /** Runs a script whose writes need no acknowledgement (a release, a withdrawal, a read). */
    Long run(RedisScript<Long> script, List<String> keys, String... args) {
        return run(script, encode(keys.toArray(String[]::new)), encode(args));
    }

    /** Like {@link #run(RedisScript, List, String...)}, with keys and arguments already encoded as UTF-8. */
    Long run(RedisScript<Long> script, byte[][] keys, byte[][] args) {
        try {
            if (!direct) {
                return redis.execute(script, decode(keys), (Object[]) decode(args).toArray(String[]::new));
            }
            return evalSha(script, ReturnType.INTEGER, keys, args);
        } catch (DataAccessException e) {
            throw AclDenials.forScript(e, keys); // a denial names the key; other errors stay as they are
        }
    }

    /**
     * Runs a script that answers with a string and whose writes need no acknowledgement (the watchdog's batched
     * renewal, which reports one character per key).
     */
    String runForText(RedisScript<String> script, List<String> keys, String... args) {
        try {
            if (!direct) {
                return redis.execute(script, keys, (Object[]) args);
            }
            Object reply = evalSha(script, ReturnType.VALUE, encode(keys.toArray(String[]::new)), encode(args));
            return reply instanceof byte[] text ? new String(text, StandardCharsets.UTF_8) : (String) reply;
        } catch (DataAccessException e) {
            throw AclDenials.forScript(e, encode(keys.stream().limit(1).toArray(String[]::new)));
        }
    }

    /**
     * Whether {@link #runAllForText} pipelines its calls: on a Lettuce factory's shared connection, or on a Jedis Cluster
     * factory's node connections; else it sends them one after the other.
     */
    boolean pipelinesScriptCalls() {
        return lettuce != null || (direct && JEDIS_PRESENT && JedisClusterPipeline.handles(redis.getRequiredConnectionFactory()));
    }

    /**
     * Runs a script that answers with a string once per entry of {@code keys} and {@code args}, every call with keys of
     * one hash slot, all served by one Cluster master as far as {@code slot} (the first call's) tells: pipelined where
     * {@link #pipelinesScriptCalls()}. When that master lacks the script (it restarted, failed over, or its scripts
     * were flushed) and refuses the calls with NOSCRIPT, one of them loads it and the rest go out in one pipeline
     * again; a call the pipeline still could not run (a redirection after a failover or a resharding) is sent again
     * alone, routed by the driver.
     *
     * @return per call its reply, or the exception it failed with
     */
    Object[] runAllForText(RedisScript<String> script, List<byte[][]> keys, List<byte[][]> args, int slot) {
        Prepared prepared = prepared(script);
        Object[] replies = pipelined(prepared, keys, args, slot);
        List<Integer> noScript = new ArrayList<>();
        for (int i = 0; i < replies.length; i++) {
            if (replies[i] instanceof RuntimeException e && isNoScript(e)) {
                noScript.add(i);
            }
        }
        int loading = -1;
        if (noScript.size() > 1) {
            loading = noScript.get(0);
            replies[loading] = alone(script, keys.get(loading), args.get(loading)); // EVAL loads it on that master
            List<Integer> again = noScript.subList(1, noScript.size());
            Object[] sentAgain = pipelined(prepared, again.stream().map(keys::get).toList(),
                    again.stream().map(args::get).toList(), slot);
            for (int j = 0; j < sentAgain.length; j++) {
                replies[again.get(j)] = sentAgain[j];
            }
        }
        for (int i = 0; i < replies.length; i++) {
            if (replies[i] == null || (i != loading && replies[i] instanceof RuntimeException e && !isNodeDown(e))) {
                replies[i] = alone(script, keys.get(i), args.get(i)); // the loading call was sent alone already
            } else if (replies[i] instanceof byte[] text) {
                replies[i] = new String(text, StandardCharsets.UTF_8);
            }
        }
        return replies;
    }

    /**
     * Each call's reply or failure from one pipeline, where {@link #pipelinesScriptCalls()}; else every entry
     * {@code null} (not sent).
     */
    private Object[] pipelined(Prepared prepared, List<byte[][]> keys, List<byte[][]> args, int slot) {
        if (lettuce != null) {
            return lettuce.runAll(prepared.sha1Bytes(), keys, args);
        }
        if (pipelinesScriptCalls()) {
            return JedisClusterPipeline.run(redis.getRequiredConnectionFactory(), prepared.sha1Bytes(), keys, args, slot);
        }
        return new Object[keys.size()];
    }

    /** One call of {@link #runAllForText} sent on its own: its reply as a string, or the exception it failed with. */
    private Object alone(RedisScript<String> script, byte[][] keys, byte[][] args) {
        try {
            Object reply = evalSha(script, ReturnType.VALUE, keys, args);
            return reply instanceof byte[] text ? new String(text, StandardCharsets.UTF_8) : reply;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** Whether a pipelined call failed because its node could not be reached in time: not worth sending again now. */
    private static boolean isNodeDown(RuntimeException e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.io.IOException || t instanceof java.util.concurrent.TimeoutException
                    || t.getClass().getSimpleName().contains("Timeout")
                    || t.getClass().getSimpleName().contains("Connection")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the template talks to a Redis Cluster, where the keys of one script call must share a hash slot; asked
     * of a connection the first time, then remembered.
     */
    boolean isCluster() {
        Boolean known = cluster;
        if (known == null) {
            try (RedisConnection connection = redis.getRequiredConnectionFactory().getConnection()) {
                known = connection instanceof RedisClusterConnection;
            }
            cluster = known;
            if (known) {
                clusterNodes.lookUpSoon(); // before the watchdog asks which master serves a slot
            }
        }
        return known;
    }

    /**
     * The Cluster master that serves {@code redisKey} ({@code host:port}) as last looked up, without asking Redis:
     * {@code null} when the template does not talk to a Cluster, or not known yet. Decides which node's queue a
     * renewal or background call waits in, never where the call goes (the driver routes it).
     */
    String masterOf(String redisKey) {
        return clusterNodes.masterOf(ClusterSlotHashUtil.calculateSlot(redisKey));
    }

    /**
     * Like {@link #isCluster()}, but {@code true} (the cautious answer: keys of one call in one hash slot) when it is
     * not known yet and Redis cannot be asked now.
     */
    boolean isClusterOrUnknown() {
        try {
            return isCluster();
        } catch (RuntimeException e) {
            return true;
        }
    }

    @SuppressWarnings("unchecked")
    private <T> T evalSha(RedisScript<?> script, ReturnType returnType, byte[][] keys, byte[][] args) {
        Prepared prepared = prepared(script);
        if (lettuce != null) {
            return lettuce.run(prepared.sha1Bytes(), prepared.text(), returnType == ReturnType.INTEGER, keys, args);
        }
        if (jedis != null) {
            return jedis.run(prepared.sha1Bytes(), prepared.text(), keys, args);
        }
        byte[][] keysAndArgs = keysAndArgs(keys, args);
        RedisConnectionFactory factory = redis.getRequiredConnectionFactory();
        try (RedisConnection connection = factory.getConnection()) {
            try {
                return (T) connection.scriptingCommands().evalSha(prepared.sha1(), returnType, keys.length, keysAndArgs);
            } catch (RuntimeException e) {
                if (!isNoScript(e)) {
                    throw e;
                }
                // not in this server's script cache (a restart, a failover, SCRIPT FLUSH): EVAL loads it
                return (T) connection.scriptingCommands().eval(prepared.text(), returnType, keys.length, keysAndArgs);
            }
        }
    }

    private record Prepared(String sha1, byte[] sha1Bytes, byte[] text) {
    }

    private Prepared prepared(RedisScript<?> script) {
        Prepared known = prepared.get(script);
        if (known != null) {
            return known;
        }
        // a script's first call: learn, off this thread, whether this is a Cluster and which master serves each slot,
        // before a renewal or a background call needs to know
        clusterNodes.lookUpSoon();
        return prepared.computeIfAbsent(script, s -> new Prepared(s.getSha1(), bytes(s.getSha1()), bytes(s.getScriptAsString())));
    }

    static byte[][] encode(String... strings) {
        byte[][] encoded = new byte[strings.length][];
        for (int i = 0; i < strings.length; i++) {
            encoded[i] = bytes(strings[i]);
        }
        return encoded;
    }

    private static List<String> decode(byte[][] encoded) {
        return Arrays.stream(encoded).map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    private static byte[][] keysAndArgs(byte[][] keys, byte[][] args) {
        byte[][] keysAndArgs = new byte[keys.length + args.length][];
        System.arraycopy(keys, 0, keysAndArgs, 0, keys.length);
        System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
        return keysAndArgs;
    }

    /**
     * Runs a script that may grant or extend a lock; with replica acknowledgement on, then waits for the replicas.
     *
     * @param wrote whether a reply means the script granted or extended something a holder will rely on
     * @param undo takes back what such a reply granted, when too few replicas acknowledged it; {@code null} for a
     *        renewal, which is only reported as failed
     * @param what what the script did, for the error: "the acquisition", "the renewal"
     * @throws ReplicaAckException when {@code wrote} and fewer replicas acknowledged than required (after the undo)
     */
    Long runAcknowledged(RedisScript<Long> script, List<String> keys, LongPredicate wrote, LongConsumer undo, String what,
            String... args) {
        return runAcknowledged(script, encode(keys.toArray(String[]::new)), wrote, undo, what, encode(args));
    }

    /** Like {@link #runAcknowledged(RedisScript, List, LongPredicate, LongConsumer, String, String...)}, encoded. */
    Long runAcknowledged(RedisScript<Long> script, byte[][] keys, LongPredicate wrote, LongConsumer undo, String what,
            byte[][] args) {
        if (!replicaAck.enabled()) {
            return run(script, keys, args);
        }
        // exposed: the driver's own connection, not a proxy, so the Lettuce one can be told apart
        long[] replyAndAcks;
        try {
            replyAndAcks = redis.execute((RedisCallback<long[]>) connection -> {
                try {
                    return scriptThenWait(connection, script, keys, args);
                } catch (DataAccessException e) {
                    throw e;
                } catch (RuntimeException e) { // a pipeline's driver exceptions are not translated (Jedis's broken connection)
                    throw new RedisSystemException("Redis failed to run a lock script and its WAIT: " + e.getMessage(), e);
                }
            }, true);
        } catch (DataAccessException e) {
            throw AclDenials.forScript(e, keys);
        }
        long reply = replyAndAcks[0];
        long acknowledged = replyAndAcks[1];
        if (!wrote.test(reply) || acknowledged >= replicaAck.replicas()) {
            return reply;
        }
        String outcome = "";
        if (undo != null) {
            try {
                undo.accept(reply);
                outcome = "; it was taken back";
            } catch (RuntimeException e) {
                log.warn("Could not take back a lock grant that too few replicas acknowledged; its lease ends it", e);
                outcome = "; taking it back failed too (" + e.getMessage() + "), so its lease ends it";
            }
        }
        throw new ReplicaAckException(what, acknowledged, replicaAck.replicas(), replicaAck.timeout(), outcome);
    }

    private long[] scriptThenWait(RedisConnection connection, RedisScript<Long> script, byte[][] keys, byte[][] args) {
        if (connection instanceof RedisClusterConnection) {
            throw new InvalidDataAccessApiUsageException("redis-lock.replica-ack works with a single master and its "
                    + "replicas (standalone or Sentinel), not with Redis Cluster; set redis-lock.replica-ack.replicas=0");
        }
        byte[][] keysAndArgs = keysAndArgs(keys, args);
        try {
            return pipelined(connection, () -> connection.scriptingCommands()
                    .evalSha(prepared(script).sha1(), ReturnType.INTEGER, keys.length, keysAndArgs));
        } catch (RuntimeException e) {
            if (!isNoScript(e)) {
                throw e;
            }
            // not loaded on this server yet (or it restarted): EVAL loads it, as RedisTemplate does on NOSCRIPT
            return pipelined(connection, () -> connection.scriptingCommands()
                    .eval(prepared(script).text(), ReturnType.INTEGER, keys.length, keysAndArgs));
        }
    }

    private long[] pipelined(RedisConnection connection, Runnable script) {
        connection.openPipeline();
        List<Object> results;
        try {
            script.run();
            if (LETTUCE_PRESENT && LettuceWait.handles(connection)) {
                LettuceWait.send(connection, waitArgs);
            } else {
                connection.execute("WAIT", waitArgs);
            }
        } finally {
            results = connection.closePipeline();
        }
        return new long[] {toLong(results.get(0)), toLong(results.get(1))};
    }

    private static long toLong(Object result) {
        if (result instanceof Number number) {
            return number.longValue();
        }
        throw new IllegalStateException("unexpected reply to a lock script or WAIT: " + result);
    }

    /**
     * {@code e} as the caller of a script sees it: a {@link DataAccessException} as it is, a driver's exception as
     * {@code factory}'s own exception translator makes it (as Spring Data Redis's connections do), anything else wrapped.
     */
    static RuntimeException translated(RedisConnectionFactory factory, RuntimeException e) {
        if (e instanceof DataAccessException) {
            return e;
        }
        DataAccessException translated = factory.translateExceptionIfPossible(e);
        return translated != null ? translated : new RedisSystemException("Redis failed to run a lock script: " + e.getMessage(), e);
    }

    static boolean isNoScript(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("NOSCRIPT")) {
                return true;
            }
        }
        return false;
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * {@code value} in decimal, as a script argument: written as ASCII digits, with no string in between. The values
     * calls send are few and recur (leases, sleeps, permits), so the most recent one per slot is kept encoded: the array
     * returned is shared, never to be written to.
     */
    static byte[] number(long value) {
        int slot = (int) (value ^ (value >>> 16)) & (RECENT_NUMBERS.length - 1);
        EncodedNumber seen = RECENT_NUMBERS[slot];
        if (seen != null && seen.value == value) {
            return seen.bytes;
        }
        byte[] bytes = digits(value);
        RECENT_NUMBERS[slot] = new EncodedNumber(value, bytes); // a racy write: its final fields publish it whole
        return bytes;
    }

    private record EncodedNumber(long value, byte[] bytes) {
    }

    private static byte[] digits(long value) {
        if (value == Long.MIN_VALUE) {
            return bytes(Long.toString(value));
        }
        long rest = Math.abs(value);
        int length = value < 0 ? 2 : 1;
        for (long left = rest; left >= 10; left /= 10) {
            length++;
        }
        byte[] digits = new byte[length];
        for (int i = length - 1; i >= 0; i--) {
            digits[i] = (byte) ('0' + rest % 10);
            rest /= 10;
        }
        if (value < 0) {
            digits[0] = '-';
        }
        return digits;
    }

    /**
     * Spring Data Redis's Lettuce connection reads the reply of a command it has no type for as a bulk string, which
     * WAIT's integer reply is not; only loaded when Lettuce is on the class path.
     */
    private static final class LettuceWait {

        static boolean handles(RedisConnection connection) {
            return connection instanceof org.springframework.data.redis.connection.lettuce.LettuceConnection;
        }

        static void send(RedisConnection connection, byte[][] waitArgs) {
            ((org.springframework.data.redis.connection.lettuce.LettuceConnection) connection).execute("WAIT",
                    new io.lettuce.core.output.IntegerOutput<>(io.lettuce.core.codec.ByteArrayCodec.INSTANCE), waitArgs);
        }
    }
}
