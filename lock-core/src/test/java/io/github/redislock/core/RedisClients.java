package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Clients (connection factory + template + lock template) on a test Redis, a Redis Cluster or a Redis
 * Sentinel deployment, closed together.
 */
final class RedisClients implements AutoCloseable {

    private final Duration connectTimeout;
    private final Duration readTimeout;
    private final Function<JedisClientConfiguration, JedisConnectionFactory> jedis;
    private final Supplier<RedisConfiguration> lettuce;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    RedisClients(RedisServerProcess server) {
        this(Duration.ofMillis(500), Duration.ofSeconds(1),
                client -> new JedisConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()), client),
                () -> new RedisStandaloneConfiguration(server.host(), server.port()));
    }

    /** On a test Redis, logged in as the ACL user {@code username}. */
    RedisClients(RedisServerProcess server, String username, String password) {
        this(Duration.ofMillis(500), Duration.ofSeconds(1),
                client -> new JedisConnectionFactory(loggedIn(server, username, password), client),
                () -> loggedIn(server, username, password));
    }

    private static RedisStandaloneConfiguration loggedIn(RedisServerProcess server, String username, String password) {
        RedisStandaloneConfiguration config = new RedisStandaloneConfiguration(server.host(), server.port());
        config.setUsername(username);
        config.setPassword(password);
        return config;
    }

    /** Jedis's default two-second timeouts, which the cluster tests were written against. */
    RedisClients(RedisClusterProcesses cluster) {
        this(Duration.ofSeconds(2), Duration.ofSeconds(2),
                client -> new JedisConnectionFactory(new RedisClusterConfiguration(cluster.nodes()), client),
                () -> new RedisClusterConfiguration(cluster.nodes()));
    }

    /** On a test Redis Cluster, logged in as the ACL user {@code username}. */
    RedisClients(RedisClusterProcesses cluster, String username, String password) {
        this(Duration.ofSeconds(2), Duration.ofSeconds(2),
                client -> new JedisConnectionFactory(loggedIn(cluster, username, password), client),
                () -> loggedIn(cluster, username, password));
    }

    private static RedisClusterConfiguration loggedIn(RedisClusterProcesses cluster, String username, String password) {
        RedisClusterConfiguration config = new RedisClusterConfiguration(cluster.nodes());
        config.setUsername(username);
        config.setPassword(password);
        return config;
    }

    /** Through the sentinels to whichever server is master now. */
    RedisClients(RedisSentinelProcesses sentinel) {
        this(Duration.ofMillis(500), Duration.ofSeconds(1),
                client -> new JedisConnectionFactory(new RedisSentinelConfiguration(RedisSentinelProcesses.MASTER_NAME,
                        new HashSet<>(sentinel.sentinelNodes())), client),
                () -> new RedisSentinelConfiguration(RedisSentinelProcesses.MASTER_NAME, new HashSet<>(sentinel.sentinelNodes())));
    }

    private RedisClients(Duration connectTimeout, Duration readTimeout,
            Function<JedisClientConfiguration, JedisConnectionFactory> jedis, Supplier<RedisConfiguration> lettuce) {
        this.connectTimeout = connectTimeout;
        this.readTimeout = readTimeout;
        this.jedis = jedis;
        this.lettuce = lettuce;
    }

    StringRedisTemplate redisTemplate() {
        return redisTemplate(readTimeout);
    }

    /** Jedis with the given read timeout: a request not answered within it fails, though Redis may still run it. */
    StringRedisTemplate redisTemplate(Duration readTimeout) {
        JedisClientConfiguration client = JedisClientConfiguration.builder()
                .connectTimeout(connectTimeout).readTimeout(readTimeout)
                .usePooling().build();
        JedisConnectionFactory factory = jedis.apply(client);
        factory.getPoolConfig().setMaxTotal(64);
        factory.afterPropertiesSet();
        factory.start();
        closeables.add(factory::destroy);
        return new StringRedisTemplate(factory);
    }

    /**
     * Lettuce, Spring Boot's default driver, as Boot sets it up (one shared native connection, the default 60 s command
     * timeout), on this Redis, Cluster or Sentinel deployment: it abandons a call when the calling thread is interrupted.
     */
    StringRedisTemplate lettuceRedisTemplate() {
        return lettuceRedisTemplate(new LettuceConnectionFactory(lettuce.get()));
    }

    /** Lettuce with the given command timeout and whether its factory shares one native connection. */
    StringRedisTemplate lettuceRedisTemplate(Duration commandTimeout, boolean shareNativeConnection) {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(lettuce.get(),
                LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
        factory.setShareNativeConnection(shareNativeConnection);
        return lettuceRedisTemplate(factory);
    }

    private StringRedisTemplate lettuceRedisTemplate(LettuceConnectionFactory factory) {
        factory.afterPropertiesSet();
        factory.start();
        closeables.add(factory::destroy);
        return new StringRedisTemplate(factory);
    }

    RedisLockTemplate lockTemplate(StringRedisTemplate redis) {
        return lockTemplate(new RedisLockTemplate(redis, RedisLockConfig.defaults()));
    }

    /** Closes {@code template} with these clients. */
    RedisLockTemplate lockTemplate(RedisLockTemplate template) {
        closeables.add(0, template);
        return template;
    }

    RedisLockTemplate lockTemplate() {
        return lockTemplate(RedisLockConfig.defaults());
    }

    RedisLockTemplate lockTemplate(RedisLockConfig config) {
        RedisLockTemplate template = new RedisLockTemplate(redisTemplate(), config);
        closeables.add(0, template);
        return template;
    }

    @Override
    public void close() {
        closeAll(closeables);
    }

    /** Closes each of {@code closeables} in order, going on past any that fails, and forgets them. */
    static void closeAll(List<AutoCloseable> closeables) {
        for (AutoCloseable closeable : closeables) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        closeables.clear();
    }
}
