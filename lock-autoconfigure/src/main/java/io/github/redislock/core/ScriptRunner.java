package io.github.redislock.core;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the lock scripts with EVALSHA (EVAL when Redis answers NOSCRIPT), as {@link StringRedisTemplate#execute(
 * RedisScript, List, Object...)} does, but straight on a connection of the template's factory with the keys and
 * arguments encoded once: the template's own path wraps every call's connection in a new proxy and a
 * {@code DefaultStringRedisConnection} and serializes through its serializers, which cost more client time than
 * the script call itself (measured with JFR on the uncontended lock+unlock path; see docs/benchmarks.md).
 * <p>
 * The connection is the factory's own, never one bound to the caller's thread: a lock takes effect at once, also
 * inside a Redis transaction of the caller's. A template of a subclass (one that records or traces its script
 * calls, say) still sees every call: its {@code execute} is used as it is.
 */
final class ScriptRunner {

    private final StringRedisTemplate template;
    private final boolean direct;

    ScriptRunner(StringRedisTemplate template) {
        this.template = template;
        this.direct = template.getClass() == StringRedisTemplate.class;
    }

    /** Runs {@code script} with {@code keys} and {@code args}, answering its integer reply (null for a nil one). */
    Long execute(RedisScript<Long> script, List<String> keys, String... args) {
        if (!direct) {
            return template.execute(script, keys, (Object[]) args);
        }
        int keyCount = keys.size();
        byte[][] keysAndArgs = new byte[keyCount + args.length][];
        for (int i = 0; i < keyCount; i++) {
            keysAndArgs[i] = keys.get(i).getBytes(StandardCharsets.UTF_8);
        }
        for (int i = 0; i < args.length; i++) {
            keysAndArgs[keyCount + i] = args[i].getBytes(StandardCharsets.UTF_8);
        }
        RedisConnectionFactory factory = template.getRequiredConnectionFactory();
        try (RedisConnection connection = factory.getConnection()) {
            try {
                return connection.scriptingCommands().evalSha(script.getSha1(), ReturnType.INTEGER, keyCount, keysAndArgs);
            } catch (RuntimeException e) {
                if (!isNoScript(e)) {
                    throw e;
                }
                // not in this server's script cache (a restart, a failover, SCRIPT FLUSH): EVAL loads it
                return connection.scriptingCommands().eval(script.getScriptAsString().getBytes(StandardCharsets.UTF_8),
                        ReturnType.INTEGER, keyCount, keysAndArgs);
            }
        }
    }

    private static boolean isNoScript(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && message.contains("NOSCRIPT")) {
                return true;
            }
        }
        return false;
    }
}
