package io.github.redislock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.Await;
import io.github.redislock.test.TestTls;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The locks over TLS, configured the way a Spring Boot application does it ({@code spring.data.redis.ssl.*} and a PEM
 * SSL bundle), against a real {@code redis-server} TLS port with a certificate made for the test, with Jedis and with
 * Lettuce: acquire, renewal past the lease, a waiter woken by the release notice of its TLS subscription, release.
 */
class RedisTlsTest {

    static TestTls tls;
    static TestTls.TlsRedis redis;

    @BeforeAll
    static void startRedisWithTls() {
        tls = TestTls.generate();
        redis = tls.startRedis();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    private ApplicationContextRunner application(String clientType) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.client-type=" + clientType,
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + redis.tlsPort(),
                        "spring.data.redis.ssl.enabled=true",
                        "spring.data.redis.ssl.bundle=test-redis",
                        "spring.ssl.bundle.pem.test-redis.truststore.certificate=file:" + tls.caCertificate(),
                        "redis-lock.lease-time=1500ms");
    }

    @ParameterizedTest
    @ValueSource(strings = {"jedis", "lettuce"})
    void locksAreTakenRenewedHandedToAWokenWaiterAndReleasedOverTls(String clientType) {
        String key = "tls-" + clientType;
        application(clientType).run(holderApp -> application(clientType).run(waiterApp -> {
            assertThat(holderApp).hasNotFailed();
            RedisLockTemplate holder = holderApp.getBean(RedisLockTemplate.class);
            RedisLockTemplate waiter = waiterApp.getBean(RedisLockTemplate.class);
            LockHandle renewed = holder.acquire(key + ":renewed", LockOptions.tryOnce());
            // a fixed lease far beyond the wait's re-check interval: only the release notice wakes the waiter soon
            LockHandle held = holder.acquire(key, LockOptions.tryOnce().withLease(Duration.ofSeconds(60)));
            CompletableFuture<long[]> waiting = CompletableFuture.supplyAsync(() -> {
                try (LockHandle handle = waiter.acquire(key, LockOptions.waitFor(Duration.ofSeconds(30)))) {
                    return new long[] {System.nanoTime(), handle.fencingToken()};
                }
            });
            String waiterChannel = "redis-lock:wake:" + waiter.clientId();
            // the plain port is the test's own: the applications know only the TLS one
            Await.until(() -> waiterChannel.equals(redis.server().command("PUBSUB", "CHANNELS", "redis-lock:wake:*"))
                    && "1".equals(redis.server().command("ZCARD", "redis-lock:{" + key + "}:waiters")),
                    Duration.ofSeconds(10), "the waiter subscribed over TLS and registered");
            Thread.sleep(3500); // over two leases of the watchdog's: renewed over TLS, or lost
            assertThat(renewed.isHeld()).as("held past two leases").isTrue();
            assertThat(Long.parseLong(redis.server().command("PTTL", "redis-lock:{" + key + ":renewed}"))).isPositive();
            assertThat(waiting).as("the waiter still waits").isNotDone();
            long releasedAt = System.nanoTime();
            held.release();
            long[] acquired = waiting.get(10, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(acquired[0] - releasedAt))
                    .as("ms until the waiter has the lock: woken by the release notice, not its 5 s re-check").isLessThan(2500);
            assertThat(acquired[1]).isGreaterThan(held.fencingToken());
            renewed.release();
            assertThat(redis.server().command("EXISTS", "redis-lock:{" + key + "}", "redis-lock:{" + key + ":renewed}"))
                    .as("released").isEqualTo("0");
        }));
    }
}
