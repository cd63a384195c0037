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
import java.util.concurrent.locks.LockSupport;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A semaphore waiter whose own acquire reaches Redis just after a release by another thread of its client handed it
 * permits (so the acquire finds them and keeps them) holds them: the release, whose reply comes back late (the waiter's
 * acquire waits for it before it returns), must not take them back as if the waiter had given up. The interleaving is
 * forced with {@link SemaphorePermits}' test hooks.
 */
@WithRedis
class SemaphoreHandOverRaceTest {

    private static final String KEY = "hand-over:race";

    static RedisServerProcess server;

    @Test
    void aWaiterWhoseAcquireFindsAHandOverKeepsItsPermitsWhenTheReleaseAnswersLate() throws Exception {
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
            CountDownLatch handedOverInRedis = new CountDownLatch(1);
            AtomicBoolean once = new AtomicBoolean();
            permits.beforeAcquireScript = () -> {
                if (once.compareAndSet(false, true)) { // the waiter's first look: it passed its offer, not claimed yet
                    waiterAboutToAcquire.countDown();
                    await(handedOverInRedis);
                }
            };
            permits.afterHandOverScript = () -> {
                handedOverInRedis.countDown(); // the permit is the waiter's in Redis; its reply is "late"
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
            };

            CompletableFuture<Optional<PermitHandle>> waiter = CompletableFuture.supplyAsync(
                    () -> semaphore.tryAcquire(LockOptions.waitFor(Duration.ofSeconds(20)).withLease(Duration.ofSeconds(30))),
                    waiterThread);
            await(waiterAboutToAcquire);
            CompletableFuture<Void> release = CompletableFuture.runAsync(held::release, holderThread); // hands the permit over
            Optional<PermitHandle> got = waiter.get(30, TimeUnit.SECONDS);
            assertThat(got).as("the waiter's acquire found the hand-over and kept it").isPresent();
            release.get(30, TimeUnit.SECONDS);

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
