package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisSentinelProcesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The engine behind Redis Sentinel: locks work through the sentinels and keep working after a failover. */
class RedisSentinelLockTest {

    RedisSentinelProcesses sentinel;
    JedisConnectionFactory factory;
    RedisLockTemplate first;
    RedisLockTemplate second;

    @BeforeEach
    void start() {
        sentinel = RedisSentinelProcesses.start();
        RedisSentinelConfiguration config = new RedisSentinelConfiguration(RedisSentinelProcesses.MASTER_NAME,
                new HashSet<>(sentinel.sentinelNodes()));
        factory = new JedisConnectionFactory(config, JedisClientConfiguration.builder()
                .connectTimeout(Duration.ofMillis(500)).readTimeout(Duration.ofSeconds(1)).usePooling().build());
        factory.afterPropertiesSet();
        factory.start();
        first = new RedisLockTemplate(new StringRedisTemplate(factory));
        second = new RedisLockTemplate(new StringRedisTemplate(factory));
    }

    @AfterEach
    void stop() {
        first.close();
        second.close();
        factory.destroy();
        sentinel.close();
    }

    @Test
    void locksGoThroughTheSentinelsToTheMaster() throws Exception {
        try (LockHandle held = first.acquire("orders:1", LockOptions.tryOnce())) {
            assertThat(second.tryAcquire("orders:1", LockOptions.tryOnce())).isEmpty();
            assertThat(sentinel.master().command("EXISTS", "redis-lock:{orders:1}")).isEqualTo("1");
        }
        try (LockHandle next = second.acquire("orders:1", LockOptions.tryOnce())) {
            assertThat(next.isHeld()).isTrue();
        }
    }

    @Test
    void afterTheMasterDiesLocksAreTakenOnThePromotedReplicaWithHigherTokens() throws Exception {
        long tokenBefore;
        try (LockHandle handle = first.acquire("orders:2", LockOptions.tryOnce())) {
            tokenBefore = handle.fencingToken();
        }
        int oldMaster = sentinel.currentMasterPort();
        long killedAt = System.nanoTime();
        sentinel.master().kill();

        LockHandle after = null;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (after == null && System.nanoTime() < end) {
            try {
                after = second.acquire("orders:2", LockOptions.waitFor(Duration.ofSeconds(1)));
            } catch (LockNotAcquiredException stillFailingOver) {
                Thread.sleep(100);
            }
        }
        long recoveredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        System.out.println("Sentinel failover: locks acquired again " + recoveredMs + " ms after the master was killed");
        assertThat(after).as("a lock acquired after the failover").isNotNull();
        try (LockHandle handle = after) {
            assertThat(sentinel.currentMasterPort()).isNotEqualTo(oldMaster).isEqualTo(sentinel.replica().port());
            assertThat(handle.fencingToken()).isGreaterThan(tokenBefore);
            assertThat(sentinel.replica().command("EXISTS", "redis-lock:{orders:2}")).isEqualTo("1");
        }
    }
}
