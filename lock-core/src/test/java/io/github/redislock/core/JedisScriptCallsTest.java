package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The lock scripts on a Jedis factory's shared {@code UnifiedJedis} client ({@link JedisScriptCalls}): chosen where the
 * factory has one, and behaving towards the caller as Spring Data Redis's own Jedis path does (scripts reloaded,
 * Spring's exceptions, a factory stopped and started again).
 */
@WithRedis(freshForEachTest = true)
@ExtendWith(RedisClientsExtension.class)
class JedisScriptCallsTest {

    RedisServerProcess server;
    RedisClients clients;
    StringRedisTemplate redis;

    @Test
    void chosenOnlyForAFactoryWithASharedUnifiedClientOutsideACluster() {
        JedisClientConfiguration pooled = JedisClientConfiguration.builder().usePooling().build();
        JedisConnectionFactory unified = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1), pooled);
        assertThat(unified.isUseUnifiedJedis()).as("Spring Data Redis's default with Jedis 7").isTrue();
        assertThat(JedisScriptCalls.on(unified)).isNotNull();
        JedisConnectionFactory legacy = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1), pooled);
        legacy.setUseUnifiedJedis(false);
        assertThat(JedisScriptCalls.on(legacy)).as("a pool of Jedis connections").isNull();
        JedisConnectionFactory cluster = new JedisConnectionFactory(new RedisClusterConfiguration(List.of("127.0.0.1:1")), pooled);
        assertThat(JedisScriptCalls.on(cluster)).as("Redis Cluster").isNull();
        assertThat(JedisScriptCalls.on(clients.lettuceRedisTemplate().getRequiredConnectionFactory())).as("Lettuce").isNull();
    }

    @Test
    void locksOfTwoClientsNeverOverlap() throws Exception {
        assertTwoClientsExclude(clients.redisTemplate(), clients.redisTemplate());
    }

    @Test
    void aFactoryOfPooledJedisConnectionsStillLocksThroughSpringDataRedis() throws Exception {
        List<JedisConnectionFactory> factories = new ArrayList<>();
        try {
            assertTwoClientsExclude(legacyTemplate(factories), legacyTemplate(factories));
        } finally {
            factories.forEach(JedisConnectionFactory::destroy);
        }
    }

    @Test
    void scriptsFlushedWhileLockingAreLoadedAgain() throws Exception {
        RedisLockTemplate locks = clients.lockTemplate(clients.redisTemplate());
        ScriptCallChecks.lockWhileScriptsAreFlushed(locks, server);
        assertThat(redis.keys("redis-lock:{flushed:*}")).isEmpty();
    }

    @Test
    void aStoppedRedisGivesSpringsExceptionNotJedises() {
        RedisLockTemplate locks = clients.lockTemplate(clients.redisTemplate(Duration.ofMillis(500)));
        LockHandle held = locks.acquire("stopped", LockOptions.tryOnce());
        server.stop();
        assertThatThrownBy(() -> locks.acquire("stopped:other", LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class)
                .cause().isInstanceOf(DataAccessException.class);
        // a release that cannot reach Redis leaves the lock to its lease; a raw Jedis exception would escape it
        assertThatCode(held::release).doesNotThrowAnyException();
        assertThat(held.isHeld()).isFalse();
    }

    @Test
    void locksGoOnAfterTheFactoryIsStoppedAndStartedAgain() {
        StringRedisTemplate jedis = clients.redisTemplate();
        RedisLockTemplate locks = clients.lockTemplate(jedis);
        locks.acquire("restarted", LockOptions.tryOnce()).release();
        JedisConnectionFactory factory = (JedisConnectionFactory) jedis.getRequiredConnectionFactory();
        factory.stop(); // closes its client
        factory.start(); // and makes a new one
        try (LockHandle handle = locks.acquire("restarted", LockOptions.tryOnce())) {
            assertThat(handle.isHeld()).isTrue();
            assertThat(redis.hasKey("redis-lock:{restarted}")).isTrue();
        }
        assertThat(redis.hasKey("redis-lock:{restarted}")).isFalse();
    }

    private StringRedisTemplate legacyTemplate(List<JedisConnectionFactory> made) {
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration(server.host(),
                server.port()), JedisClientConfiguration.builder().usePooling().build());
        factory.setUseUnifiedJedis(false);
        factory.afterPropertiesSet();
        factory.start();
        made.add(factory);
        StringRedisTemplate template = new StringRedisTemplate(factory);
        assertThat(JedisScriptCalls.on(factory)).isNull();
        return template;
    }

    private void assertTwoClientsExclude(StringRedisTemplate one, StringRedisTemplate two) throws Exception {
        ScriptCallChecks.assertTwoClientsExclude(clients.lockTemplate(one), clients.lockTemplate(two));
    }
}
