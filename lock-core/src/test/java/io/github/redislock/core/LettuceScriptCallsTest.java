package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Intervals;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The lock scripts on Lettuce's shared native connection ({@link LettuceScriptCalls}): chosen for a factory that
 * shares it, and behaving towards the caller as Spring Data Redis's own Lettuce path does (scripts reloaded, the
 * factory's command timeout, Spring's exceptions).
 */
@WithRedis(freshForEachTest = true)
@ExtendWith(RedisClientsExtension.class)
class LettuceScriptCallsTest {

    RedisServerProcess server;
    RedisClients clients;
    StringRedisTemplate redis;

    @Test
    void scriptsRunOnTheSharedNativeConnectionOnlyForAPlainTemplateOnAFactoryThatSharesIt() {
        StringRedisTemplate shared = clients.lettuceRedisTemplate(Duration.ofSeconds(5), true);
        assertThat(new ScriptRunner(shared, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).isTrue();
        StringRedisTemplate notShared = clients.lettuceRedisTemplate(Duration.ofSeconds(5), false);
        assertThat(new ScriptRunner(notShared, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).isFalse();
        StringRedisTemplate subclass = new StringRedisTemplate(shared.getRequiredConnectionFactory()) {
        };
        assertThat(new ScriptRunner(subclass, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).isFalse();
        assertThat(new ScriptRunner(redis, RedisLockConfig.ReplicaAck.OFF).onSharedLettuceConnection()).as("Jedis").isFalse();
    }

    @Test
    void locksOfTwoClientsOnSharedConnectionsNeverOverlap() throws Exception {
        assertTwoClientsExclude(clients.lettuceRedisTemplate(Duration.ofSeconds(5), true));
    }

    @Test
    void aFactoryThatDoesNotShareItsConnectionStillLocksThroughSpringDataRedis() throws Exception {
        assertTwoClientsExclude(clients.lettuceRedisTemplate(Duration.ofSeconds(5), false));
    }

    @Test
    void scriptsFlushedWhileLockingAreLoadedAgain() throws Exception {
        RedisLockTemplate locks = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(5), true));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                String key = "flushed:" + t;
                workers.add(pool.submit(() -> {
                    int cycles = 0;
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                    while (System.nanoTime() < end) {
                        try (LockHandle handle = locks.acquire(key, LockOptions.tryOnce())) {
                            assertThat(handle.isHeld()).isTrue();
                        }
                        cycles++;
                    }
                    return cycles;
                }));
            }
            for (int i = 0; i < 5; i++) {
                Thread.sleep(200);
                server.command("SCRIPT", "FLUSH");
            }
            for (Future<Integer> worker : workers) {
                assertThat(worker.get(30, TimeUnit.SECONDS)).isPositive();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(server.command("SCRIPT", "EXISTS", LockScripts.ACQUIRE.getSha1())).isEqualTo("1");
        assertThat(redis.keys("redis-lock:{flushed:*}")).isEmpty();
    }

    @Test
    void aPausedRedisFailsTheCallAfterTheFactorysCommandTimeoutWithSpringsException() throws Exception {
        RedisLockTemplate locks = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofMillis(300), true));
        locks.acquire("paused:warm-up", LockOptions.tryOnce()).release();
        server.command("CLIENT", "PAUSE", "3000", "ALL");
        long start = System.nanoTime();
        assertThatThrownBy(() -> locks.acquire("paused", LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class)
                .cause().isInstanceOf(QueryTimeoutException.class);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // without the factory's 300 ms, Lettuce's default of 60 s would wait the 3 s pause out and take the lock
        assertThat(tookMillis).isLessThan(2500);
    }

    @Test
    void aStoppedRedisGivesSpringsExceptionNotLettuces() {
        RedisLockTemplate locks = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofMillis(500), true));
        LockHandle held = locks.acquire("stopped", LockOptions.tryOnce());
        server.stop();
        assertThatThrownBy(() -> locks.acquire("stopped:other", LockOptions.tryOnce()))
                .isInstanceOf(LockNotAcquiredException.class)
                .cause().isInstanceOf(DataAccessException.class);
        // a release that cannot reach Redis leaves the lock to its lease; a raw Lettuce exception would escape it
        assertThatCode(held::release).doesNotThrowAnyException();
        assertThat(held.isHeld()).isFalse();
    }

    @Test
    void locksGoOnAfterTheFactoryResetsItsSharedConnection() {
        StringRedisTemplate lettuce = clients.lettuceRedisTemplate(Duration.ofSeconds(5), true);
        RedisLockTemplate locks = clients.lockTemplate(lettuce);
        locks.acquire("reset", LockOptions.tryOnce()).release();
        ((LettuceConnectionFactory) lettuce.getRequiredConnectionFactory()).resetConnection(); // closes the shared one
        try (LockHandle handle = locks.acquire("reset", LockOptions.tryOnce())) {
            assertThat(handle.isHeld()).isTrue();
            assertThat(redis.hasKey("redis-lock:{reset}")).isTrue();
        }
        assertThat(redis.hasKey("redis-lock:{reset}")).isFalse();
    }

    private void assertTwoClientsExclude(StringRedisTemplate lettuce) throws Exception {
        RedisLockTemplate first = clients.lockTemplate(lettuce);
        RedisLockTemplate second = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(5),
                ((LettuceConnectionFactory) lettuce.getRequiredConnectionFactory()).getShareNativeConnection()));
        List<long[]> sections = java.util.Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                RedisLockTemplate locks = t % 2 == 0 ? first : second;
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < 25; i++) {
                        try (LockHandle handle = locks.acquire("shared", LockOptions.waitFor(Duration.ofSeconds(20)))) {
                            long enter = System.nanoTime();
                            Thread.sleep(1);
                            sections.add(new long[] {enter, System.nanoTime()});
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(sections).hasSize(100);
        assertThat(Intervals.maxConcurrency(sections, section -> section[0], section -> section[1])).isEqualTo(1);
    }
}
