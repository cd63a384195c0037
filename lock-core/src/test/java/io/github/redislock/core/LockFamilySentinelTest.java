package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The fair, read/write and semaphore locks through Redis Sentinel, on whichever server is master; the last test
 * fails the master over (one deployment for the class: the contract's tests run first, on the original master).
 */
@WithRedisSentinel
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LockFamilySentinelTest extends LockFamilyContract {

    static RedisSentinelProcesses sentinel;

    @Test
    @Order(Integer.MAX_VALUE)
    void afterTheMasterDiesFairAndReadWriteLocksAreTakenOnThePromotedReplicaWithHigherTokens() throws Exception {
        long fairBefore;
        long writeBefore;
        try (LockHandle fair = first.fairLock("fair-failover").acquire(LockOptions.tryOnce());
                MultiLockHandle write = first.acquireAll(List.of("rw-failover"), LockOptions.tryOnce(), LockType.WRITE)) {
            fairBefore = fair.fencingToken();
            writeBefore = write.fencingToken("rw-failover");
        }
        long killedAt = System.nanoTime();
        sentinel.master().kill();

        LockHandle fair = retryUntilFailedOver(() -> second.fairLock("fair-failover").acquire(LockOptions.waitFor(Duration.ofSeconds(1))));
        System.out.println("Sentinel failover: fair lock acquired again "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt) + " ms after the master was killed");
        sentinel.awaitPromoted(Duration.ofSeconds(10));
        assertThat(fair.fencingToken()).isGreaterThan(fairBefore);
        assertThat(sentinel.replica().command("EXISTS", "redis-lock:{fair-failover}")).isEqualTo("1");
        // a waiter on the other client queues on the new master and is handed the lock by the release
        Future<Long> waiter = pool.submit(() -> {
            try (LockHandle next = first.fairLock("fair-failover").acquire(THIRTY_SECONDS)) {
                return next.fencingToken();
            }
        });
        awaitUntil(() -> "1".equals(sentinel.replica().command("ZCARD", "redis-lock:{fair-failover}:queue")),
                "the waiter queued on the new master");
        fair.release();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(fair.fencingToken());

        try (MultiLockHandle write = retryUntilFailedOver(() -> second.acquireAll(List.of("rw-failover"),
                LockOptions.waitFor(Duration.ofSeconds(1)), LockType.WRITE))) {
            assertThat(write.fencingToken("rw-failover")).isGreaterThan(writeBefore);
            assertThat(first.tryAcquireAll(List.of("rw-failover"), LockOptions.tryOnce(), LockType.READ)).isEmpty();
        }
        try (MultiLockHandle reading = first.acquireAll(List.of("rw-failover"), LockOptions.tryOnce(), LockType.READ);
                MultiLockHandle alsoReading = second.acquireAll(List.of("rw-failover"), LockOptions.tryOnce(), LockType.READ)) {
            assertThat(sentinel.replica().command("ZCARD", "redis-lock:{rw-failover}:rw:readers")).isEqualTo("2");
            assertThat(reading.fencingToken("rw-failover")).isGreaterThan(writeBefore);
        }
    }

    /** Keeps trying {@code acquire} while Sentinel promotes the replica: at most 30 s. */
    private static <T> T retryUntilFailedOver(Callable<T> acquire) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return acquire.call();
            } catch (LockNotAcquiredException stillFailingOver) {
                if (System.nanoTime() > end) {
                    throw stillFailingOver;
                }
                Thread.sleep(100);
            }
        }
    }
}
