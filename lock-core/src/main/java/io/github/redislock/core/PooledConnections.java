package io.github.redislock.core;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettucePoolingClientConfiguration;
import org.springframework.util.ClassUtils;

/**
 * How many calls to one Redis node a connection factory runs at once: as many as its pool has connections, when each
 * call borrows a pooled one. Callers size their threads to it ({@link RedlockNodes}' calls per node, the
 * {@link Watchdog}'s renewal lanes): a thread more would only wait for a connection, and commons-pool's waiting
 * borrowers spin on the CPU while another thread makes one (with Spring Boot's default negative {@code maxWait}).
 * To a frozen or restarting Redis a connection is being made all the time, so every such thread burns a processor.
 * <p>
 * Pooled: Jedis with pooling on, behind Sentinel (always pooled), as {@code UnifiedJedis}, and for Redis Cluster (a
 * pool per node, each with the factory's pool configuration, pooling on or not); Lettuce with a
 * {@link LettucePoolingClientConfiguration}, for the calls that take a dedicated connection: every call when the
 * factory does not share its native connection, else only pipelines (replica acknowledgement's script and
 * {@code WAIT}), since a shared native connection takes any number of plain calls at once. Lettuce's pool holds
 * connections to the whole Cluster, not one pool per node: there the answer bounds the calls to all masters together,
 * which a cap per master does not enforce. Jedis and Lettuce are each loaded only when present; without commons-pool
 * there is no pool.
 */
final class PooledConnections {

    private static final ClassLoader LOADER = PooledConnections.class.getClassLoader();
    private static final boolean POOL_PRESENT = ClassUtils.isPresent(
            "org.apache.commons.pool2.impl.GenericObjectPoolConfig", LOADER);
    private static final boolean JEDIS_PRESENT = ClassUtils.isPresent("redis.clients.jedis.Jedis", LOADER);
    private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient", LOADER);

    private PooledConnections() {
    }

    /**
     * {@code most}, or fewer: no more calls to one node than {@code factory}'s pool has connections, when its calls
     * borrow pooled ones.
     *
     * @param pipelined whether each call is a pipeline (on Lettuce, a dedicated connection even when the factory
     *        shares its native one)
     */
    static int callsAtOnce(RedisConnectionFactory factory, boolean pipelined, int most) {
        if (!POOL_PRESENT) {
            return most;
        }
        int connections = -1;
        if (JEDIS_PRESENT) {
            connections = Jedis.connections(factory);
        }
        if (connections < 0 && LETTUCE_PRESENT) {
            connections = Lettuce.connections(factory, pipelined);
        }
        return connections > 0 ? Math.min(most, connections) : most; // a negative maxTotal is no limit
    }

    private static int maxTotal(@Nullable GenericObjectPoolConfig<?> config) {
        return config != null ? config.getMaxTotal() : GenericObjectPoolConfig.DEFAULT_MAX_TOTAL;
    }

    /** A class of its own so that Jedis is loaded only when it is present. */
    private static final class Jedis {

        /** The pool's maxTotal, or -1 when the calls borrow no pooled connection. */
        static int connections(RedisConnectionFactory factory) {
            if (factory instanceof JedisConnectionFactory jedis
                    && (jedis.isRedisClusterAware() || jedis.getUsePool())) {
                return maxTotal(jedis.getPoolConfig()); // with none, Spring Data Redis pools with the defaults
            }
            return -1;
        }
    }

    /** A class of its own so that Lettuce is loaded only when it is present. */
    private static final class Lettuce {

        /** The pool's maxTotal, or -1 when the calls borrow no pooled connection. */
        static int connections(RedisConnectionFactory factory, boolean pipelined) {
            if (factory instanceof LettuceConnectionFactory lettuce
                    && lettuce.getClientConfiguration() instanceof LettucePoolingClientConfiguration pooling
                    && (pipelined || !lettuce.getShareNativeConnection())) {
                return maxTotal(pooling.getPoolConfig());
            }
            return -1;
        }
    }
}
