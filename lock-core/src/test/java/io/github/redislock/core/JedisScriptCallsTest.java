package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Intervals;
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
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                String key = "flushed:" + t;
                workers.add(pool.submit(() -> {
                    int cycles = 0;
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                    while (System.nanoTime() < end) {
                        try (LockHandle handle = locks.acquire(key, LockOptions.tryOnce())) {
                            assertThat(handle.isHeld()).isTrue();
                        }
                        cycles++;
                    }
                    return cycles;
                }));
            }
            for (int i = 0; i < 5; i++) {
                Thread.sleep(200);
                server.command("SCRIPT", "FLUSH");
            }
            for (Future<Integer> worker : workers) {
                assertThat(worker.get(30, TimeUnit.SECONDS)).isPositive();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(server.command("SCRIPT", "EXISTS", LockScripts.ACQUIRE.getSha1())).isEqualTo("1");
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
        RedisLockTemplate first = clients.lockTemplate(one);
        RedisLockTemplate second = clients.lockTemplate(two);
        List<long[]> sections = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                RedisLockTemplate locks = t % 2 == 0 ? first : second;
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < 25; i++) {
                        try (LockHandle handle = locks.acquire("shared", LockOptions.waitFor(Duration.ofSeconds(20)))) {
                            long enter = System.nanoTime();
                            Thread.sleep(1);
                            sections.add(new long[] {enter, System.nanoTime()});
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(sections).hasSize(100);
        assertThat(Intervals.maxConcurrency(sections, section -> section[0], section -> section[1])).isEqualTo(1);
    }
}
