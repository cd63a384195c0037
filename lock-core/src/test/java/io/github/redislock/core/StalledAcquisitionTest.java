package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A waiter stalls: its acquisition request is stuck on its connection (behind a proxy, as a lost packet leaves it)
 * past the driver's read timeout, and reaches Redis only after the holder released the lock, when it is free. It
 * must change nothing then, for every lock type: the client gave up on it, so a lock, a share or permits it took
 * would be held by nobody for a whole watchdog lease, and every other client refused meanwhile. The request is
 * given up either by the waiter's next attempt, which records the attempts before it (the waiter then takes the lock,
 * uses it and releases it before the stuck request lands), or by the waiter giving up its wait.
 */
@WithRedis(freshForEachTest = true)
class StalledAcquisitionTest {

    /** The waiter's driver gives up on a reply after this long; its stuck request is still on its way. */
    private static final Duration READ_TIMEOUT = Duration.ofMillis(300);

    RedisServerProcess server;

    /**
     * The waiter's wait ends before its driver's timeout: its one attempt fails at the deadline, and the waiter gives up
     * every attempt as it withdraws.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(LockType.class)
    void aRequestOfAWaiterThatGaveUpChangesNothingWhenItLandsAfterTheRelease(LockType type) throws Exception {
        String key = "stalled:gave-up:" + type;
        try (StallingProxy proxy = new StallingProxy(server.port()); Client holder = new Client(server.port(), null);
                Client waiter = new Client(proxy.port(), READ_TIMEOUT); Client third = new Client(server.port(), null)) {
            LockHandle held = LockTypes.acquire(holder.locks, blocking(type), key, LockOptions.tryOnce());
            stallAcquisition(proxy, type);
            assertThat(tryAcquire(waiter.locks, type, key, Duration.ofMillis(200))).as("the waiter's lock").isNull();
            assertThat(proxy.awaitStalled(0)).as("the waiter's request is stuck on its way").isTrue();
            held.release();
            Thread.sleep(200); // the waiter's clean-up after giving up runs in the background

            landStuckRequest(proxy);
            assertFreeFor(third, type, key);
        }
    }

    /**
     * The waiter's first attempt fails at its driver's timeout; its next attempt records it as given up. The waiter
     * then takes the lock once the holder releases it, and releases it in turn, before the stuck request lands.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(LockType.class)
    void aRequestAWaitersLaterAttemptGaveUpChangesNothingWhenItLandsAfterTheWaiterHeldAndReleasedTheLock(LockType type)
            throws Exception {
        String key = "stalled:retried:" + type;
        ExecutorService waiting = Executors.newSingleThreadExecutor();
        try (StallingProxy proxy = new StallingProxy(server.port()); Client holder = new Client(server.port(), null);
                Client waiter = new Client(proxy.port(), READ_TIMEOUT); Client third = new Client(server.port(), null)) {
            LockHandle held = LockTypes.acquire(holder.locks, blocking(type), key, LockOptions.tryOnce());
            stallAcquisition(proxy, type);

            Future<LockHandle> taken = waiting.submit(() -> LockTypes.acquire(waiter.locks, type, key,
                    LockOptions.waitFor(Duration.ofSeconds(20))));
            assertThat(proxy.awaitStalled(10_000)).as("the waiter's request is stuck on its way").isTrue();
            Thread.sleep(READ_TIMEOUT.toMillis() + 500); // its driver gave up on it; the waiter asked again, and waits
            assertThat(taken).as("the waiter still waits").isNotDone();

            held.release();
            LockHandle waiterHeld = taken.get(10, TimeUnit.SECONDS);
            waiting.submit(waiterHeld::release).get(10, TimeUnit.SECONDS);

            landStuckRequest(proxy);
            assertFreeFor(third, type, key);
        } finally {
            waiting.shutdownNow();
        }
    }

    /** The type that keeps {@code type} out: a writer keeps a reader out. */
    private static LockType blocking(LockType type) {
        return type == LockType.READ ? LockType.WRITE : type;
    }

    /** The type that a lock taken by {@code type} keeps out: a reader keeps a writer out. */
    private static LockType keptOut(LockType type) {
        return type == LockType.READ ? LockType.WRITE : type;
    }

    /** {@code type}'s acquisition script. */
    private static RedisScript<Long> acquisitionScript(LockType type) {
        return switch (type) {
            case EXCLUSIVE -> LockScripts.ACQUIRE;
            case FAIR -> FairLockScripts.FAIR_ACQUIRE;
            case READ -> LockScripts.RW_READ_ACQUIRE;
            case WRITE -> LockScripts.RW_WRITE_ACQUIRE;
            case SEMAPHORE -> SemaphoreScripts.ACQUIRE;
        };
    }

    /** The lock, or {@code null} when the wait ended without it (also when Redis did not answer in time). */
    private static @Nullable LockHandle tryAcquire(RedisLockTemplate locks, LockType type, String key, Duration wait) {
        try {
            return LockTypes.acquire(locks, type, key, LockOptions.waitFor(wait));
        } catch (LockNotAcquiredException e) {
            return null;
        }
    }

    /**
     * Arms the proxy for the waiter's first acquisition request, with its script loaded in Redis first: else the stuck
     * request would be refused there as unknown (NOSCRIPT), its driver sending the script itself only after the reply.
     */
    private void stallAcquisition(StallingProxy proxy, LockType type) {
        RedisScript<Long> script = acquisitionScript(type);
        ScriptCalls.load(server, script);
        proxy.stallNextRequestContaining(script.getSha1());
    }

    /** Lets the stuck request through and waits until Redis ran it. */
    private void landStuckRequest(StallingProxy proxy) throws InterruptedException {
        long calls = ScriptCalls.ran(server);
        proxy.release();
        ScriptCalls.awaitAbove(server, calls, "the stuck request reaches Redis");
    }

    /** A third client takes what the stuck request would have taken, at once. */
    private static void assertFreeFor(Client third, LockType type, String key) {
        LockHandle handle = tryAcquire(third.locks, keptOut(type), key, Duration.ZERO);
        assertThat(handle).as("the lock, free once the stuck request landed, for a third client").isNotNull();
        handle.release();
    }

    /** A lock client on {@code port}, with a short read timeout when given. */
    private static final class Client implements AutoCloseable {

        final JedisConnectionFactory factory;
        final RedisLockTemplate locks;

        Client(int port, @Nullable Duration readTimeout) {
            factory = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
                    JedisClientConfiguration.builder().connectTimeout(Duration.ofSeconds(1))
                            .readTimeout(readTimeout != null ? readTimeout : Duration.ofSeconds(10)).usePooling().build());
            factory.afterPropertiesSet();
            factory.start();
            locks = new RedisLockTemplate(new StringRedisTemplate(factory), RedisLockConfig.defaults());
        }

        @Override
        public void close() {
            locks.close();
            factory.destroy();
        }
    }
}
