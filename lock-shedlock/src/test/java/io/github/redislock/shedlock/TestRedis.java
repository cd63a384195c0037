package io.github.redislock.shedlock;

import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisServerProcess;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** A lock template on a test Redis, closed with its connection factory. */
final class TestRedis implements AutoCloseable {

    final JedisConnectionFactory connections;
    final StringRedisTemplate redis;
    final RedisLockTemplate locks;

    TestRedis(RedisServerProcess server) {
        connections = new JedisConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
        connections.afterPropertiesSet();
        connections.start();
        redis = new StringRedisTemplate(connections);
        locks = new RedisLockTemplate(redis);
    }

    @Override
    public void close() {
        locks.close();
        connections.destroy();
    }
}
