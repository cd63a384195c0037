package io.github.redislock.core;

import java.util.concurrent.TimeUnit;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs the lock scripts straight on the shared native connection of a {@link LettuceConnectionFactory} (standalone,
 * Sentinel, master/replica or Cluster), the connection Spring Data Redis itself sends every plain command of the
 * application on. Spring Data Redis's own path to it makes a {@code LettuceConnection} per call and converts each
 * call and reply through its invoker: calling-thread time and garbage a lock call need not pay. Here a call is
 * EVALSHA (EVAL when Redis answers NOSCRIPT), awaited for the factory's command timeout and cancelled after it, as
 * Spring Data Redis does, and a failure is translated by the factory's own exception translator, so callers see the same
 * {@link DataAccessException}s as through a template.
 * <p>
 * Only for a factory that shares its native connection (Spring Boot's default); without sharing, Spring Data Redis
 * gives each connection a dedicated native one (a pool borrow) and {@link ScriptRunner} keeps to that path. Only
 * loaded when Lettuce is on the class path.
 */
final class LettuceScriptCalls {

    private final LettuceConnectionFactory factory;
    /** The shared connection and its commands, looked up again when it was closed (a factory reset) or is down. */
    private volatile Shared shared;

    private LettuceScriptCalls(LettuceConnectionFactory factory) {
        this.factory = factory;
    }

    /** Script calls on {@code factory}'s shared native connection, or {@code null} when it has none to offer. */
    static LettuceScriptCalls on(RedisConnectionFactory factory) {
        return factory instanceof LettuceConnectionFactory lettuce && lettuce.getShareNativeConnection()
                ? new LettuceScriptCalls(lettuce) : null;
    }

    private record Shared(StatefulConnection<byte[], byte[]> connection,
            RedisScriptingAsyncCommands<byte[], byte[]> commands, long timeoutMillis) {
    }

    /**
     * Runs a script with EVALSHA, and with EVAL when Redis does not have it (a restart, a failover, SCRIPT FLUSH).
     *
     * @param integer whether the reply is an integer ({@code Long}); else a bulk string ({@code byte[]})
     * @throws DataAccessException as Spring Data Redis's Lettuce connection would throw it
     */
    <T> T run(String sha1, byte[] script, boolean integer, byte[][] keys, byte[][] args) {
        ScriptOutputType type = integer ? ScriptOutputType.INTEGER : ScriptOutputType.VALUE;
        Shared shared = shared();
        try {
            try {
                return await(shared.commands.evalsha(sha1, type, keys, args), shared);
            } catch (RuntimeException e) {
                if (!ScriptRunner.isNoScript(e)) {
                    throw e;
                }
                return await(shared.commands.eval(script, type, keys, args), shared);
            }
        } catch (DataAccessException e) {
            throw e;
        } catch (RuntimeException e) {
            DataAccessException translated = factory.translateExceptionIfPossible(e);
            throw translated != null ? translated : new RedisSystemException("Redis failed to run a lock script: " + e.getMessage(), e);
        }
    }

    private static <T> T await(RedisFuture<T> reply, Shared shared) {
        return LettuceFutures.awaitOrCancel(reply, shared.timeoutMillis, TimeUnit.MILLISECONDS);
    }

    private Shared shared() {
        Shared current = shared;
        if (current != null && current.connection.isOpen()) {
            return current;
        }
        return lookUpShared();
    }

    /**
     * Asks the factory for its shared connection: a new one after {@code resetConnection()}, the same one (still
     * reconnecting) while Redis is down, and an exception when the factory was stopped.
     */
    private synchronized Shared lookUpShared() {
        if (!factory.getShareNativeConnection()) {
            throw new IllegalStateException("The LettuceConnectionFactory stopped sharing its native connection "
                    + "after the lock template was made; make the template again");
        }
        RedisConnection connection = factory.getConnection();
        try {
            Object commands = connection.getNativeConnection();
            StatefulConnection<byte[], byte[]> stateful;
            if (commands instanceof RedisAsyncCommands<?, ?> standalone) {
                stateful = cast(standalone.getStatefulConnection());
            } else if (commands instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
                stateful = cast(cluster.getStatefulConnection());
            } else {
                throw new IllegalStateException("Unexpected native Lettuce connection " + commands.getClass().getName());
            }
            Shared found = new Shared(stateful, cast(commands), factory.getTimeout());
            shared = found;
            return found;
        } finally {
            connection.close(); // a shared native connection stays open
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object o) {
        return (T) o;
    }
}
