package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.Await;
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
        int oldMaster = sentinel.currentMasterPort();
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
            // the client follows the first sentinel that announces the new master; the one asked here may learn it later
            Await.until(() -> sentinel.currentMasterPort() != oldMaster, Duration.ofSeconds(10),
                    "the sentinel asked names the new master");
            assertThat(sentinel.currentMasterPort()).isEqualTo(sentinel.replica().port());
            assertThat(handle.fencingToken()).isGreaterThan(tokenBefore);
            assertThat(sentinel.replica().command("EXISTS", "redis-lock:{scanners}:semaphore:holders")).isEqualTo("1");
        }
    }
}
