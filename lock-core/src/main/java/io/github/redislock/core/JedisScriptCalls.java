package io.github.redislock.core;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

import java.util.Arrays;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.args.Rawable;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Runs the lock scripts straight on the {@link UnifiedJedis} client of a {@link JedisConnectionFactory} that uses one
 * (Spring Data Redis 4's default with Jedis 7, standalone or Sentinel): the thread-safe client Spring Data Redis itself
 * sends every plain command on, taking a pooled connection per command. Spring Data Redis's own path to it makes a
 * {@code JedisConnection} per call, with a facade object per command group and a client configuration, and its
 * {@code close()} throws and catches an exception when no transaction is open, which fills in a stack trace: per
 * lock+unlock that was about half of the calling thread's heap and a share of its CPU (measured with JFR on the
 * benchmark's S1). Here a call is EVALSHA (EVAL when Redis answers NOSCRIPT) on the same client, with the client's own
 * timeouts, and a failure is translated by the factory's own exception translator, so callers see the same
 * {@link DataAccessException}s as through a template. The keys and arguments go to Jedis as they are: its own
 * {@code evalsha(byte[]...)} copies every one of them first, which was over half of what a lock+unlock allocated after
 * the change above (the scripts take 4 keys and 7 to 9 arguments).
 * <p>
 * The client is asked of the factory once and again after a call fails other than with an error reply of Redis's
 * (the factory was stopped and started, which makes a new client). Only loaded when Jedis is on the class path.
 */
final class JedisScriptCalls {

    private final JedisConnectionFactory factory;
    /** The factory's client as last looked up. */
    private volatile UnifiedJedis client;

    private JedisScriptCalls(JedisConnectionFactory factory) {
        this.factory = factory;
    }

    /**
     * Script calls on {@code factory}'s {@link UnifiedJedis} client, or {@code null} when it has none: another driver, a
     * factory of pooled {@code Jedis} connections ({@code useUnifiedJedis} off), or Redis Cluster, whose calls keep to
     * Spring Data Redis's cluster connection.
     */
    static JedisScriptCalls on(RedisConnectionFactory factory) {
        return factory instanceof JedisConnectionFactory jedis && jedis.isUseUnifiedJedis() && !jedis.isRedisClusterAware()
                ? new JedisScriptCalls(jedis) : null;
    }

    /**
     * Runs a script with EVALSHA, and with EVAL when Redis does not have it (a restart, a failover, SCRIPT FLUSH).
     *
     * @param keys the script's keys and {@code args} its arguments, never written to (nor kept) here
     * @return the reply as Jedis gives it: {@code Long} for an integer, {@code byte[]} for a bulk string
     * @throws DataAccessException as Spring Data Redis's Jedis connection would throw it
     */
    @SuppressWarnings("unchecked")
    <T> T run(byte[] sha1, byte[] script, byte[][] keys, byte[][] args) {
        UnifiedJedis used = client();
        try {
            return (T) evalSha(used, sha1, script, keys, args);
        } catch (JedisDataException e) { // an error reply: the client is fine
            throw translate(e);
        } catch (RuntimeException e) {
            UnifiedJedis now = lookUp();
            if (now == used) {
                throw translate(e);
            }
            try { // the factory was restarted since: the call never reached Redis through the old client
                return (T) evalSha(now, sha1, script, keys, args);
            } catch (RuntimeException again) {
                throw translate(again);
            }
        }
    }

    private static Object evalSha(UnifiedJedis client, byte[] sha1, byte[] script, byte[][] keys, byte[][] args) {
        try {
            return client.executeCommand(command(Protocol.Command.EVALSHA, sha1, keys, args));
        } catch (JedisDataException e) {
            if (!ScriptRunner.isNoScript(e)) {
                throw e;
            }
            return client.executeCommand(command(Protocol.Command.EVAL, script, keys, args));
        }
    }

    /** {@code EVALSHA sha1 numkeys key... arg...} (or EVAL with the script's text), its byte arrays sent as they are. */
    private static CommandArguments command(Protocol.Command command, byte[] script, byte[][] keys, byte[][] args) {
        CommandArguments arguments = new CommandArguments(command).add(new Bytes(script)).add(keys.length);
        for (byte[] key : keys) {
            arguments.add(new Bytes(key));
        }
        for (byte[] arg : args) {
            arguments.add(new Bytes(arg));
        }
        return arguments;
    }

    /** An argument for Jedis that is the bytes given, where Jedis's own would be a copy of them. */
    private static final class Bytes implements Rawable {

        private final byte[] raw;

        Bytes(byte[] raw) {
            this.raw = raw;
        }

        @Override
        public byte[] getRaw() {
            return raw;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Rawable rawable && Arrays.equals(raw, rawable.getRaw());
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(raw);
        }
    }

    private RuntimeException translate(RuntimeException e) {
        return ScriptRunner.translated(factory, e);
    }

    private UnifiedJedis client() {
        UnifiedJedis known = client;
        return known != null ? known : lookUp();
    }

    /** The factory's current client: a new one after the factory was stopped and started. */
    private UnifiedJedis lookUp() {
        RedisConnection connection = factory.getConnection();
        try {
            if (!(connection.getNativeConnection() instanceof UnifiedJedis found)) {
                throw new IllegalStateException("Unexpected native Jedis connection "
                        + connection.getNativeConnection().getClass().getName());
            }
            client = found;
            return found;
        } finally {
            connection.close(); // the client is the factory's, shared: it stays open
        }
    }
}
