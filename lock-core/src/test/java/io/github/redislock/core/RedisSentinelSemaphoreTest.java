package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The semaphore behind Redis Sentinel: permits go through the sentinels to the master and keep working after a failover. */
@WithRedisSentinel(freshForEachTest = true)
@ExtendWith(RedisClientsExtension.class)
class RedisSentinelSemaphoreTest {

    RedisSentinelProcesses sentinel;
    RedisLockTemplate first;
    RedisLockTemplate second;

    @Test
    void permitsAreHeldOnTheMasterAndTakenOnThePromotedReplicaAfterAFailoverWithHigherTokens() throws Exception {
        long tokenBefore;
        try (PermitHandle both = first.semaphore("scanners", 2).acquire(2, LockOptions.tryOnce())) {
            assertThat(second.semaphore("scanners", 2).tryAcquire(LockOptions.tryOnce())).isEmpty();
            assertThat(sentinel.master().command("EXISTS", "redis-lock:{scanners}:semaphore:holders")).isEqualTo("1");
            tokenBefore = both.fencingToken();
        }
        sentinel.master().kill();

        PermitHandle after = null;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (after == null && System.nanoTime() < end) {
            try {
                after = second.semaphore("scanners", 2).acquire(2, LockOptions.waitFor(Duration.ofSeconds(1)));
            } catch (LockNotAcquiredException stillFailingOver) {
                Thread.sleep(100);
            }
        }
        assertThat(after).as("permits acquired after the failover").isNotNull();
        try (PermitHandle handle = after) {
            sentinel.awaitPromoted(Duration.ofSeconds(10));
            assertThat(handle.fencingToken()).isGreaterThan(tokenBefore);
            assertThat(sentinel.replica().command("EXISTS", "redis-lock:{scanners}:semaphore:holders")).isEqualTo("1");
        }
    }
}
