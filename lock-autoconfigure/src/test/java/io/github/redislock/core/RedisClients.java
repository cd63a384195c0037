package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Clients (connection factory + template + lock template) on a test Redis, closed together. */
final class RedisClients implements AutoCloseable {

    private final RedisServerProcess server;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    RedisClients(RedisServerProcess server) {
        this.server = server;
    }

    StringRedisTemplate redisTemplate() {
        return redisTemplate(Duration.ofSeconds(1));
    }

    /** Jedis with the given read timeout: a request not answered within it fails, though Redis may still run it. */
    StringRedisTemplate redisTemplate(Duration readTimeout) {
        JedisClientConfiguration client = JedisClientConfiguration.builder()
                .connectTimeout(Duration.ofMillis(500)).readTimeout(readTimeout)
                .usePooling().build();
        JedisConnectionFactory factory = new JedisConnectionFactory(
                new RedisStandaloneConfiguration(server.host(), server.port()), client);
        factory.getPoolConfig().setMaxTotal(64);
        factory.afterPropertiesSet();
        factory.start();
        closeables.add(factory::destroy);
        return new StringRedisTemplate(factory);
    }

    /** Lettuce, Spring Boot's default driver: it abandons a call when the calling thread is interrupted. */
    StringRedisTemplate lettuceRedisTemplate() {
        LettuceConnectionFactory factory = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(server.host(), server.port()));
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
