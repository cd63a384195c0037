package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisClusterProcesses;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedisCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The semaphore on a three-master Redis Cluster: each semaphore's keys share a slot, semaphores spread over slots. */
@WithRedisCluster
@ExtendWith(RedisClientsExtension.class)
class RedisClusterSemaphoreTest {

    static RedisClusterProcesses cluster;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    @Test
    void semaphoresInEverySlotRangeAdmitTheirLimitRaiseItAndReturnPermits() {
        Set<String> mastersUsed = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            String key = "pool:" + i;
            RedisSemaphore semaphore = first.semaphore(key, 2);
            try (PermitHandle a = semaphore.acquire(LockOptions.tryOnce());
                    PermitHandle b = second.semaphore(key, 2).acquire(LockOptions.tryOnce())) {
                assertThat(b.fencingToken()).isGreaterThan(a.fencingToken());
                assertThat(semaphore.availablePermits()).isZero();
                semaphore.setPermits(3);
                assertThat(semaphore.availablePermits()).isEqualTo(1);
                mastersUsed.add(masterOf("redis-lock:{" + key + "}:semaphore:holders"));
            }
            assertThat(second.semaphore(key, 2).availablePermits()).isEqualTo(3);
        }
        assertThat(mastersUsed).hasSize(3);
    }

    @Test
    void aWaiterIsWokenByAReleaseOnTheCluster() throws Exception {
        PermitHandle held = first.semaphore("wake", 1).acquire(LockOptions.tryOnce());
        long[] acquiredAt = new long[1];
        Thread waiter = new Thread(() -> {
            try (PermitHandle permit = second.semaphore("wake", 1).acquire(LockOptions.waitFor(Duration.ofSeconds(20)))) {
                acquiredAt[0] = System.nanoTime();
            }
        });
        waiter.start();
        Thread.sleep(300);
        long releasedAt = System.nanoTime();
        held.release();
        waiter.join(20_000);
        assertThat(acquiredAt[0]).isPositive();
        assertThat(TimeUnit.NANOSECONDS.toMillis(acquiredAt[0] - releasedAt)).as("woken, not re-checked after 5 s")
                .isLessThan(2000);
    }

    /** The master holding {@code key} now. */
    private static String masterOf(String key) {
        RedisServerProcess master = cluster.masterHolding(key);
        return master.host() + ":" + master.port();
    }
}
