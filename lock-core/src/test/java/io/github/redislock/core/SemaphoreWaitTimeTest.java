package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A semaphore waiter's wait time holds while a release by another thread of its client, which is handing it permits,
 * is stuck in Redis: the release's connection is stalled behind a proxy (its driver would wait for its read timeout),
 * every other connection works.
 */
@WithRedis
class SemaphoreWaitTimeTest {

    private static final String KEY = "wait-time:stuck-release";
    /** Far longer than the wait: today's waiter waited this long for the stuck release. */
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(6);

    static RedisServerProcess server;

    @Test
    void aWaiterReturnsWithinItsWaitTimeWhileAReleaseHandingItPermitsIsStuckInRedis() throws Exception {
        ExecutorService holderThread = Executors.newSingleThreadExecutor();
        JedisConnectionFactory factory = null;
        try (StallingProxy proxy = new StallingProxy(server.port())) {
            factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", proxy.port()),
                    JedisClientConfiguration.builder().connectTimeout(Duration.ofSeconds(1)).readTimeout(READ_TIMEOUT)
                            .usePooling().build());
            factory.afterPropertiesSet();
            factory.start();
            try (RedisLockTemplate locks = new RedisLockTemplate(new StringRedisTemplate(factory), RedisLockConfig.defaults())) {
                RedisSemaphore semaphore = locks.semaphore(KEY, 1);
                semaphore.acquire(LockOptions.tryOnce()).release(); // Redis has every script the test sends now
                PermitHandle held = holderThread.submit(() -> semaphore.acquire(LockOptions.tryOnce())).get(10, TimeUnit.SECONDS);
                Duration wait = Duration.ofSeconds(2);
                CompletableFuture<String> waiter = CompletableFuture.supplyAsync(() -> {
                    long start = System.nanoTime();
                    boolean granted = semaphore.tryAcquire(LockOptions.waitFor(wait).withLease(Duration.ofSeconds(30))).isPresent();
                    return (granted ? "granted" : "not granted") + " after "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms";
                });
                awaitWaiting(locks);
                proxy.stallNextRequestContaining(SemaphoreScripts.RELEASE.getSha1());
                Future<?> release = holderThread.submit(held::release); // claims the waiter's offer to hand it the permit
                assertThat(proxy.awaitStalled(10_000)).as("the release is stuck").isTrue();

                String outcome = waiter.get(30, TimeUnit.SECONDS);
                long millis = Long.parseLong(outcome.replaceAll("\\D+", " ").trim());
                assertThat(millis).as("the waiter's %s (wait time %d ms)", outcome, wait.toMillis())
                        .isLessThan(wait.toMillis() + 1000);
                assertThat(outcome).startsWith("not granted");

                proxy.release(); // the release reaches Redis now and hands the permit to the thread that gave up
                release.get(30, TimeUnit.SECONDS);
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (semaphore.availablePermits() != 1 && System.nanoTime() < end) {
                    Thread.sleep(20);
                }
                assertThat(semaphore.availablePermits()).as("the permit handed to the thread that gave up came back").isEqualTo(1);
            }
        } finally {
            holderThread.shutdownNow();
            if (factory != null) {
                factory.destroy();
            }
        }
    }

    private static void awaitWaiting(RedisLockTemplate locks) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!String.valueOf(server.command("ZRANGE", "redis-lock:{" + KEY + "}:semaphore:waiters", "0", "-1"))
                .contains(locks.clientId())) {
            assertThat(System.nanoTime()).as("a thread waits for the semaphore").isLessThan(end);
            Thread.sleep(10);
        }
    }
}
