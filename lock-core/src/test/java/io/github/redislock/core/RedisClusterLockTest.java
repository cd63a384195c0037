package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Concurrently;
import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The same engine on a three-master Redis Cluster: keys of one lock share a slot, locks spread over slots. */
@WithRedisCluster
@ExtendWith(RedisClientsExtension.class)
class RedisClusterLockTest {

    static RedisClusterProcesses cluster;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;
    static RedisClients clients;

    @Test
    void locksOnKeysInEverySlotRangeExcludeEachOtherAndHandOver() throws Exception {
        Set<String> mastersUsed = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            String key = "order:" + i;
            try (LockHandle held = first.acquire(key, LockOptions.tryOnce())) {
                assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
                mastersUsed.add(masterOf("redis-lock:{" + key + "}"));
            }
            try (LockHandle next = second.acquire(key, LockOptions.tryOnce())) {
                assertThat(next.isHeld()).isTrue();
            }
        }
        assertThat(mastersUsed).hasSize(3);
    }

    @ParameterizedTest
    @ValueSource(strings = {"}", "}x", "}{", "{}", "{", "a}b", "{x}"})
    void keysWithBracesLockExcludeAndWakeAWaiterOnTheCluster(String key) throws Exception {
        LockHandle held = first.acquire(key, LockOptions.tryOnce());
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
        long[] token = new long[1];
        Thread waiter = new Thread(() -> {
            try (LockHandle next = second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(20)))) {
                token[0] = next.fencingToken();
            }
        });
        waiter.start();
        Thread.sleep(200);
        held.release();
        waiter.join(20_000);
        assertThat(token[0]).as("the waiter got the lock, with a later token").isGreaterThan(held.fencingToken());
    }

    @Test
    void aWaiterIsWokenByAReleaseOnAnotherMaster() throws Exception {
        LockHandle held = first.acquire("hand-over", LockOptions.tryOnce());
        long[] acquiredAt = new long[1];
        Thread waiter = new Thread(() -> {
            try (LockHandle h = second.acquire("hand-over", LockOptions.waitFor(Duration.ofSeconds(20)))) {
                acquiredAt[0] = System.nanoTime();
            }
        });
        waiter.start();
        Thread.sleep(300);
        long releasedAt = System.nanoTime();
        held.release();
        waiter.join(20_000);
        long handOffMs = TimeUnit.NANOSECONDS.toMillis(acquiredAt[0] - releasedAt);
        System.out.println("cluster hand-off: " + handOffMs + " ms");
        assertThat(acquiredAt[0]).isPositive();
        assertThat(handOffMs).as("woken by the release, not by the 30 s TTL").isLessThan(1000);
    }

    @Test
    void sixteenThreadsOverTwoClientsNeverLoseAnUpdate() throws Exception {
        redis.opsForValue().set("{counter}", "0");
        incrementConcurrently(16, first, second, "counter");
        assertThat(redis.opsForValue().get("{counter}")).isEqualTo("160");
    }

    @Test
    void onLettucesSharedClusterConnectionEachScriptGoesToTheMasterOfItsKeysAndUpdatesAreNeverLost() throws Exception {
        RedisLockTemplate lettuceFirst = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(5), true));
        RedisLockTemplate lettuceSecond = clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(5), true));
        Set<String> mastersUsed = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            String key = "lettuce-order:" + i;
            try (LockHandle held = lettuceFirst.acquire(key, LockOptions.tryOnce())) {
                assertThat(lettuceSecond.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
                String master = masterOf("redis-lock:{" + key + "}");
                assertThat(RedisServerProcess.command(master.split(":")[0], Integer.parseInt(master.split(":")[1]),
                        "EXISTS", "redis-lock:{" + key + "}")).isEqualTo("1");
                mastersUsed.add(master);
            }
            try (LockHandle next = lettuceSecond.acquire(key, LockOptions.tryOnce())) {
                assertThat(next.isHeld()).isTrue();
            }
        }
        assertThat(mastersUsed).hasSize(3);
        redis.opsForValue().set("{lettuce-counter}", "0");
        incrementConcurrently(8, lettuceFirst, lettuceSecond, "lettuce-counter");
        assertThat(redis.opsForValue().get("{lettuce-counter}")).isEqualTo("80");
    }

    /**
     * Ten non-atomic increments of the value at {@code {counter}} by each of {@code threads} threads, half of them on
     * each client, each under the lock {@code counter}.
     */
    private static void incrementConcurrently(int threads, RedisLockTemplate one, RedisLockTemplate other, String counter) {
        Concurrently.run(threads, 10, thread -> (thread % 2 == 0 ? one : other).execute(counter,
                LockOptions.waitFor(Duration.ofSeconds(30)), lock -> {
                    long value = Long.parseLong(redis.opsForValue().get("{" + counter + "}"));
                    Thread.sleep(1);
                    redis.opsForValue().set("{" + counter + "}", Long.toString(value + 1));
                    return null;
                }));
    }

    private static String masterOf(String key) {
        RedisServerProcess master = cluster.masterHolding(key);
        return master.host() + ":" + master.port();
    }
}
