package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The engine behind Redis Sentinel: locks work through the sentinels and keep working after a failover. */
@WithRedisSentinel(freshForEachTest = true)
@ExtendWith(RedisClientsExtension.class)
class RedisSentinelLockTest {

    RedisSentinelProcesses sentinel;
    RedisLockTemplate first;
    RedisLockTemplate second;
    RedisClients clients;

    @Test
    void locksGoThroughTheSentinelsToTheMaster() throws Exception {
        try (LockHandle held = first.acquire("orders:1", LockOptions.tryOnce())) {
            assertThat(second.tryAcquire("orders:1", LockOptions.tryOnce())).isEmpty();
            assertThat(sentinel.master().command("EXISTS", "redis-lock:{orders:1}")).isEqualTo("1");
        }
        try (LockHandle next = second.acquire("orders:1", LockOptions.tryOnce())) {
            assertThat(next.isHeld()).isTrue();
        }
    }

    @Test
    void afterTheMasterDiesLocksAreTakenOnThePromotedReplicaWithHigherTokens() throws Exception {
        afterTheMasterDiesLocksAreTakenOnThePromotedReplica(first, second);
    }

    @Test
    void afterTheMasterDiesLettuceClientsTakeLocksOnThePromotedReplicaWithHigherTokens() throws Exception {
        afterTheMasterDiesLocksAreTakenOnThePromotedReplica(
                clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(2), true)),
                clients.lockTemplate(clients.lettuceRedisTemplate(Duration.ofSeconds(2), true)));
    }

    private void afterTheMasterDiesLocksAreTakenOnThePromotedReplica(RedisLockTemplate first, RedisLockTemplate second)
            throws Exception {
        long tokenBefore;
        try (LockHandle handle = first.acquire("orders:2", LockOptions.tryOnce())) {
            tokenBefore = handle.fencingToken();
        }
        second.acquire("orders:warm-up", LockOptions.tryOnce()).release(); // both connected to the old master
        long killedAt = System.nanoTime();
        sentinel.master().kill();

        LockHandle after = null;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (after == null && System.nanoTime() < end) {
            try {
                after = second.acquire("orders:2", LockOptions.waitFor(Duration.ofSeconds(1)));
            } catch (LockNotAcquiredException stillFailingOver) {
                Thread.sleep(100);
            }
        }
        long recoveredMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        System.out.println("Sentinel failover: locks acquired again " + recoveredMs + " ms after the master was killed");
        assertThat(after).as("a lock acquired after the failover").isNotNull();
        try (LockHandle handle = after) {
            sentinel.awaitPromoted(Duration.ofSeconds(10));
            assertThat(handle.fencingToken()).isGreaterThan(tokenBefore);
            assertThat(sentinel.replica().command("EXISTS", "redis-lock:{orders:2}")).isEqualTo("1");
        }
    }
}
