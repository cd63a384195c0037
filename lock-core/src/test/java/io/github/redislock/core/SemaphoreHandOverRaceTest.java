package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A release by another thread of the client while a semaphore waiter's own acquire script is under way does not hand
 * the waiter its permits (a hand-over reaching Redis after that acquire would give the finished acquisition permits
 * that no thread holds): it returns them to Redis, where the waiter's acquire finds them, and neither thread waits for
 * the other. The interleaving is forced with {@link SemaphorePermits}' test hooks.
 */
@WithRedis
class SemaphoreHandOverRaceTest {

    private static final String KEY = "hand-over:race";

    static RedisServerProcess server;

    @Test
    void aReleaseWhileTheWaitersOwnAcquireIsUnderWayReturnsThePermitToRedisWhereTheAcquireFindsIt() throws Exception {
        ExecutorService holderThread = Executors.newSingleThreadExecutor();
        ExecutorService waiterThread = Executors.newSingleThreadExecutor();
        JedisConnectionFactory factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", server.port()),
                JedisClientConfiguration.builder().usePooling().build());
        factory.afterPropertiesSet();
        factory.start();
        try (RedisLockTemplate locks = new RedisLockTemplate(new StringRedisTemplate(factory), RedisLockConfig.defaults())) {
            SemaphorePermits permits = engine(locks);
            RedisSemaphore semaphore = locks.semaphore(KEY, 1);
            PermitHandle held = holderThread.submit(() -> semaphore.acquire(LockOptions.tryOnce())).get(10, TimeUnit.SECONDS);

            CountDownLatch waiterAboutToAcquire = new CountDownLatch(1);
            CountDownLatch released = new CountDownLatch(1);
            AtomicBoolean once = new AtomicBoolean();
            AtomicBoolean handedOver = new AtomicBoolean();
            permits.beforeAcquireScript = () -> {
                if (once.compareAndSet(false, true)) { // the waiter's first look: its offer is closed to releases now
                    waiterAboutToAcquire.countDown();
                    await(released);
                }
            };
            permits.afterHandOverScript = () -> handedOver.set(true);

            CompletableFuture<Optional<PermitHandle>> waiter = CompletableFuture.supplyAsync(
                    () -> semaphore.tryAcquire(LockOptions.waitFor(Duration.ofSeconds(20)).withLease(Duration.ofSeconds(30))),
                    waiterThread);
            await(waiterAboutToAcquire);
            CompletableFuture<Void> release = CompletableFuture.runAsync(held::release, holderThread)
                    .whenComplete((done, failure) -> released.countDown());
            release.get(30, TimeUnit.SECONDS); // returns while the waiter's acquire has not reached Redis yet
            assertThat(handedOver).as("a hand-over to a thread whose own acquire is under way").isFalse();
            Optional<PermitHandle> got = waiter.get(30, TimeUnit.SECONDS);
            assertThat(got).as("the waiter's acquire found the permit the release returned").isPresent();

            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (semaphore.availablePermits() == 0 && System.nanoTime() < end) {
                Thread.sleep(20);
            }
            assertThat(semaphore.availablePermits()).as("free permits while the waiter holds the only one").isZero();
            assertThatCode(() -> waiterThread.submit(() -> got.get().release()).get(10, TimeUnit.SECONDS))
                    .as("the waiter releases the permit it held").doesNotThrowAnyException();
            assertThat(semaphore.availablePermits()).isEqualTo(1);
        } finally {
            holderThread.shutdownNow();
            waiterThread.shutdownNow();
            factory.destroy();
        }
    }

    private static SemaphorePermits engine(RedisLockTemplate locks) throws ReflectiveOperationException {
        Field field = RedisLockTemplate.class.getDeclaredField("semaphores");
        field.setAccessible(true);
        return (SemaphorePermits) field.get(locks);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(20, TimeUnit.SECONDS)).as("the forced interleaving").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
