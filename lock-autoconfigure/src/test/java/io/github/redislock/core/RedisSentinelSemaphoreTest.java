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

/** The semaphore behind Redis Sentinel: permits go through the sentinels to the master and keep working after a failover. */
class RedisSentinelSemaphoreTest {

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
    void permitsAreHeldOnTheMasterAndTakenOnThePromotedReplicaAfterAFailoverWithHigherTokens() throws Exception {
        long tokenBefore;
        try (PermitHandle both = first.semaphore("scanners", 2).acquire(2, LockOptions.tryOnce())) {
            assertThat(second.semaphore("scanners", 2).tryAcquire(LockOptions.tryOnce())).isEmpty();
            assertThat(sentinel.master().command("EXISTS", "redis-lock:{scanners}:semaphore:holders")).isEqualTo("1");
            tokenBefore = both.fencingToken();
        }
        int oldMaster = sentinel.currentMasterPort();
        sentinel.master().kill();

        PermitHandle after = null;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (after == null && System.nanoTime() < end) {
            try {
                after = second.semaphore("scanners", 2).acquire(2, LockOptions.waitFor(Duration.ofSeconds(1)));
            } catch (LockNotAcquiredException stillFailingOver) {
                Thread.sleep(100);
            }
        }
        assertThat(after).as("permits acquired after the failover").isNotNull();
        try (PermitHandle handle = after) {
            assertThat(sentinel.currentMasterPort()).isNotEqualTo(oldMaster).isEqualTo(sentinel.replica().port());
            assertThat(handle.fencingToken()).isGreaterThan(tokenBefore);
            assertThat(sentinel.replica().command("EXISTS", "redis-lock:{scanners}:semaphore:holders")).isEqualTo("1");
        }
    }
}
