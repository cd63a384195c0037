package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A client whose subscription to release notices is slow to come up (Lettuce's first connection to a Cluster or
 * through Sentinel took up to a second): its first waiters must not wait for it, or a fair waiter's queue entry,
 * not refreshed meanwhile, is taken for a dead waiter's and dropped. Here the subscribe call of a real
 * Jedis connection is held back until the test lets it through.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class SlowSubscriptionTest {

    static RedisClients clients;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    final CountDownLatch subscribing = new CountDownLatch(1);
    final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void letTheSubscriptionThrough() {
        subscribing.countDown();
        pool.shutdownNow();
    }

    @Test
    void aFairWaiterKeepsItsPlaceInTheQueueWhileItsSubscriptionIsNotUpYet() throws Exception {
        String key = "slow-fair";
        RedisLockTemplate slow = slowlySubscribingClient();
        LockHandle gate = first.fairLock(key).acquire(LockOptions.tryOnce());
        List<String> served = Collections.synchronizedList(new ArrayList<>());
        Future<?> early = pool.submit(() -> {
            try (LockHandle handle = slow.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
                served.add("slowly subscribing, queued first");
            }
            return null;
        });
        FairLockTestSupport.awaitQueueLength(redis, key, 1);
        Future<?> late = pool.submit(() -> {
            try (LockHandle handle = second.fairLock(key).acquire(LockOptions.waitFor(Duration.ofSeconds(30)))) {
                served.add("queued second");
            }
            return null;
        });
        FairLockTestSupport.awaitQueueLength(redis, key, 2);
        Thread.sleep(1000); // longer than a queue entry lives unrefreshed (500 ms), with the subscription still held back
        assertThat(FairLockTestSupport.queueLength(redis, key)).as("both still queued").isEqualTo(2);
        gate.release();
        early.get(10, TimeUnit.SECONDS);
        late.get(10, TimeUnit.SECONDS);
        assertThat(served).containsExactly("slowly subscribing, queued first", "queued second");
    }

    /** A client on the test Redis whose subscribe call blocks until the test ends. */
    private RedisLockTemplate slowlySubscribingClient() {
        RedisConnectionFactory real = clients.redisTemplate().getConnectionFactory();
        RedisConnectionFactory slow = (RedisConnectionFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {RedisConnectionFactory.class}, (proxy, method, args) -> {
                    Object result = invoke(method, real, args);
                    if (result instanceof RedisConnection connection) {
                        return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {RedisConnection.class},
                                (InvocationHandler) (p, m, a) -> {
                                    if (m.getName().equals("subscribe") || m.getName().equals("pSubscribe")) {
                                        subscribing.await(30, TimeUnit.SECONDS);
                                    }
                                    return invoke(m, connection, a);
                                });
                    }
                    return result;
                });
        return clients.lockTemplate(new RedisLockTemplate(new StringRedisTemplate(slow), RedisLockConfig.defaults()));
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** The fair lock's queue, read from Redis. */
    static final class FairLockTestSupport {

        static long queueLength(StringRedisTemplate redis, String key) {
            Long size = redis.opsForZSet().zCard("redis-lock:{" + key + "}:queue");
            return size == null ? 0 : size;
        }

        static void awaitQueueLength(StringRedisTemplate redis, String key, long expected) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (queueLength(redis, key) != expected) {
                assertThat(System.nanoTime()).as("queue length %d", expected).isLessThan(end);
                Thread.sleep(2);
            }
        }
    }
}
