package io.github.redislock.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import redis.clients.jedis.Connection;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.Response;

/**
 * Sends many calls of one script to one Redis Cluster master in one pipeline, on a connection of Jedis's pool for that
 * master: the watchdog's renewals of one master's holdings, one call per hash slot, cost one round trip instead of
 * one per slot. Only loaded when Jedis is on the class path.
 */
final class JedisClusterPipeline {

    private JedisClusterPipeline() {
    }

    /** Whether {@code factory} is a Jedis one for Redis Cluster. */
    static boolean handles(RedisConnectionFactory factory) {
        return factory instanceof JedisConnectionFactory jedis && jedis.isRedisClusterAware();
    }

    /**
     * Runs EVALSHA once per entry, pipelined on a connection to the master that Jedis has for {@code slot}.
     *
     * @return per call its reply, or the exception it failed with (a redirection, NOSCRIPT, a broken connection), for
     *         the caller to send that call again alone
     */
    static Object[] run(RedisConnectionFactory factory, byte[] sha1, List<byte[][]> keys, List<byte[][]> args, int slot) {
        Object[] replies = new Object[keys.size()];
        try (RedisConnection connection = factory.getConnection()) {
            try (Connection node = connectionFromSlot(connection.getNativeConnection(), slot)) {
                Pipeline pipeline = new Pipeline(node, false);
                List<Response<Object>> responses = new ArrayList<>(keys.size());
                for (int i = 0; i < keys.size(); i++) {
                    responses.add(pipeline.evalsha(sha1, Arrays.asList(keys.get(i)), Arrays.asList(args.get(i))));
                }
                pipeline.sync();
                for (int i = 0; i < replies.length; i++) {
                    try {
                        replies[i] = responses.get(i).get();
                    } catch (RuntimeException e) {
                        replies[i] = e;
                    }
                }
            }
        } catch (RuntimeException e) { // the node could not be asked: every call failed so
            RuntimeException failure = e instanceof org.springframework.dao.DataAccessException ? e
                    : new RedisSystemException("Redis failed to run a pipeline of lock scripts: " + e.getMessage(), e);
            Arrays.fill(replies, failure);
        }
        return replies;
    }

    /**
     * A pooled connection to the master serving {@code slot}, from the factory's native client: a
     * {@link RedisClusterClient} (Spring Data Redis 4's default with Jedis 7) or a {@link JedisCluster}.
     */
    private static Connection connectionFromSlot(Object client, int slot) {
        if (client instanceof RedisClusterClient cluster) {
            return cluster.getConnectionFromSlot(slot);
        }
        if (client instanceof JedisCluster cluster) {
            return cluster.getConnectionFromSlot(slot);
        }
        throw new IllegalStateException("Not a Jedis Cluster client: " + client.getClass().getName());
    }
}
