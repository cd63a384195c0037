package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.redislock.test.Await;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A waiter that holds the lock from a grant's message (the exclusive lock's grant to the longest-waiting client, the
 * fair lock's hand-over), and whose confirmation cannot reach Redis (its commands held back, each failing after
 * 300 ms, while its pub/sub connection still works), is told it lost the lock once the grant has run out (another
 * client may take the lock then), while Redis is still out of its reach: not only once its commands get through again.
 * On each driver: Lettuce's calls go their own way ({@link LettuceScriptCalls}) and fail their own way.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class GrantConfirmationUnreachableTest {

    private static final Duration LONG_WAIT = Duration.ofSeconds(30);
    /**
     * A waiter holds from the grant's message only if it asked less than 250 ms before the grant reached it; a test
     * JVM sharing two processors with another can take longer than that between W's miss and the release. So the
     * scenario runs on a fresh key until W once held from the message (at most {@value #ROUNDS} times); a round where it
     * did not (it asked, and took the lock once its commands went through) is no failure.
     */
    private static final int ROUNDS = 5;

    static RedisServerProcess server;
    static StringRedisTemplate redis;
    static RedisLockTemplate holder;

    @PerTest
    String key;
    @PerTest
    ExecutorService pool;

    private final List<DisposableBean> factories = new ArrayList<>();

    @AfterEach
    void closeFactories() throws Exception {
        for (DisposableBean factory : factories) {
            factory.destroy();
        }
    }

    @ParameterizedTest(name = "{0} lock, {1}")
    @CsvSource({"exclusive, jedis", "fair, jedis", "exclusive, lettuce", "fair, lettuce"})
    void aGrantHeldFromItsMessageWhoseConfirmationCannotReachRedisIsReportedLostWhenTheGrantRunsOut(String type,
            String driver) throws Exception {
        boolean fair = type.equals("fair");
        try (HoldBackProxy proxy = new HoldBackProxy(server.host(), server.port())) {
            StringRedisTemplate commands = new StringRedisTemplate(factory(proxy, driver));
            assertThat(new ScriptRunner(commands, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection())
                    .as("scripts on Lettuce's shared connection, as with Spring Boot's defaults")
                    .isEqualTo(driver.equals("lettuce"));
            try (RedisLockTemplate waiter = new RedisLockTemplate(commands, RedisLockConfig.defaults())) {
                holdFromGrantWhileCommandsStall(waiter, proxy, fair);
            }
        }
    }

    private void holdFromGrantWhileCommandsStall(RedisLockTemplate waiter, HoldBackProxy proxy, boolean fair)
            throws Exception {
        BlockingQueue<String> lost = new LinkedBlockingQueue<>();
        waiter.addLockLostListener((lock, reason) -> lost.add(lock.key() + ": " + reason));
        Await.until(waiter::isListening, Duration.ofSeconds(10), "W to subscribe");
        for (int round = 1; round <= ROUNDS; round++) {
            String roundKey = key + ":" + round;
            LockHandle gate = fair ? holder.fairLock(roundKey).acquire(LockOptions.tryOnce())
                    : holder.acquire(roundKey, LockOptions.tryOnce());
            CompletableFuture<LockHandle> taken = new CompletableFuture<>();
            CountDownLatch mayRelease = new CountDownLatch(1);
            Future<?> w = pool.submit(() -> {
                LockHandle handle = fair ? waiter.fairLock(roundKey).acquire(LockOptions.waitFor(LONG_WAIT))
                        : waiter.acquire(roundKey, LockOptions.waitFor(LONG_WAIT));
                taken.complete(handle);
                await(mayRelease);
                try {
                    handle.release();
                } catch (RuntimeException lostOrUnreachable) {
                    // lost, as the test expects
                }
                return null;
            });
            if (fair) {
                SlowSubscriptionTest.FairLockTestSupport.awaitQueueLength(redis, roundKey, 1);
            } else {
                Await.until(() -> waiters(roundKey).equals(List.of(waiter.clientId())), Duration.ofSeconds(10),
                        "W to wait");
            }
            proxy.holdBackCommands(); // from now on W's commands, its grant's confirmation too, fail after 300 ms
            gate.release();
            LockHandle handle;
            try {
                handle = taken.get(3, TimeUnit.SECONDS);
            } catch (TimeoutException asked) { // W had asked too long before the grant (see ROUNDS): again
                proxy.letThrough();
                taken.get(10, TimeUnit.SECONDS);
                mayRelease.countDown();
                w.get(10, TimeUnit.SECONDS);
                continue;
            }
            try {
                String reason = lost.poll(3, TimeUnit.SECONDS);
                assertThat(reason).as("what W's lost-lock listener heard while its commands could not reach Redis")
                        .isNotNull().startsWith(roundKey + ": ").contains("could not be reached to confirm its grant");
                assertThat(handle.isHeld()).isFalse();
            } finally {
                proxy.letThrough();
                mayRelease.countDown();
            }
            w.get(10, TimeUnit.SECONDS);
            assertThat(lost).as("no other loss reported").isEmpty();
            System.out.println("W held from the grant's message in round " + round);
            return;
        }
        throw new AssertionError("W never held from the grant's message in " + ROUNDS + " rounds");
    }

    /** A factory of {@code driver} through {@code proxy}, whose calls fail after 300 ms while it holds them back. */
    private RedisConnectionFactory factory(HoldBackProxy proxy, String driver) {
        Duration timeout = Duration.ofMillis(300);
        RedisConnectionFactory factory = driver.equals("lettuce") ? proxy.lettuceFactory(timeout) : proxy.jedisFactory(timeout);
        factories.add((DisposableBean) factory);
        return factory;
    }

    private static List<String> waiters(String lockKey) {
        return new ArrayList<>(redis.opsForZSet().range("redis-lock:{" + lockKey + "}:waiters", 0, -1));
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
