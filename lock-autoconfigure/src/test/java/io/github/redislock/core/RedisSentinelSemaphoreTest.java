package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The semaphore behind Redis Sentinel: permits go through the sentinels to the master and keep working after a failover. */
@WithRedisSentinel(freshForEachTest = true)
class RedisSentinelSemaphoreTest {

    RedisSentinelProcesses sentinel;
    RedisClients clients;
    RedisLockTemplate first;
    RedisLockTemplate second;

    @BeforeEach
    void connect(RedisSentinelProcesses started) {
        sentinel = started;
        clients = new RedisClients(sentinel);
        first = clients.lockTemplate();
        second = clients.lockTemplate();
    }

    @AfterEach
    void disconnect() {
        clients.close();
    }

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
            assertThat(sentinel.currentMasterPort()).isNotEqualTo(oldMaster).isEqualTo(sentinel.replica().port());
            assertThat(handle.fencingToken()).isGreaterThan(tokenBefore);
            assertThat(sentinel.replica().command("EXISTS", "redis-lock:{scanners}:semaphore:holders")).isEqualTo("1");
        }
    }
}
