package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The watchdog against a real redis-server: renewals never shorten a lease. */
class RedisWatchdogTest {

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;

    String key;

    @BeforeAll
    static void startRedis() {
        server = RedisServerProcess.start();
        clients = new RedisClients(server);
        redis = clients.redisTemplate();
    }

    @AfterAll
    static void stopRedis() {
        clients.close();
        server.close();
    }

    @BeforeEach
    void uniqueKey(TestInfo test) {
        key = test.getTestMethod().orElseThrow().getName();
    }

    private String lockKey(String name) {
        return "redis-lock:{" + name + "}";
    }

    @Test
    void aRenewalWithALeaseShorterThanTheKeysTtlDoesNotShortenItButExtendsAShorterOne() {
        redis.opsForValue().set(lockKey(key), "owner-1", Duration.ofSeconds(60));

        Long reply = redis.execute(LockScripts.RENEW, List.of(lockKey(key)), "owner-1", "30000");

        assertThat(reply).isEqualTo(1);
        assertThat(redis.getExpire(lockKey(key), TimeUnit.MILLISECONDS)).isGreaterThan(50_000);

        redis.expire(lockKey(key), Duration.ofSeconds(10));
        assertThat(redis.execute(LockScripts.RENEW, List.of(lockKey(key)), "owner-1", "30000")).isEqualTo(1);
        assertThat(redis.getExpire(lockKey(key), TimeUnit.MILLISECONDS)).isGreaterThan(20_000);
    }
}
