package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

import io.github.redislock.test.PerTest;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/** What {@link RedisLockTemplate#diagnostics()} counts, for every lock type, against a real redis-server. */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class RedisLockDiagnosticsTest {

    private static final LockOptions WAIT_30S = LockOptions.waitFor(Duration.ofSeconds(30));

    static RedisClients clients;
    static StringRedisTemplate redis;
    RedisLockTemplate template;
    RedisLockTemplate other;

    @PerTest
    String key;
    @PerTest
    ExecutorService threads;

    @Test
    void countsTheHoldingsOfEveryLockTypeAndThoseTheWatchdogRenews() {
        RedisLockDiagnostics diagnostics = template.diagnostics();
        LockHandle exclusive = template.acquire(key + ":exclusive", LockOptions.tryOnce());
        LockHandle fixedLease = template.acquire(key + ":fixed", LockOptions.tryOnce().withLease(Duration.ofSeconds(30)));
        LockHandle fair = template.fairLock(key + ":fair").acquire(LockOptions.tryOnce());
        MultiLockHandle read = template.acquireAll(List.of(key + ":read"), LockOptions.tryOnce(), LockType.READ);
        MultiLockHandle write = template.acquireAll(List.of(key + ":write"), LockOptions.tryOnce(), LockType.WRITE);
        PermitHandle permits = template.semaphore(key + ":semaphore", 3).acquire(2, LockOptions.tryOnce());
        LockHandle nested = template.acquire(key + ":exclusive", LockOptions.tryOnce()); // shares the outer holding

        assertThat(diagnostics.heldLockCount()).as("held").isEqualTo(6);
        assertThat(diagnostics.heldLockCount(LockType.EXCLUSIVE)).as("exclusive").isEqualTo(2);
        assertThat(diagnostics.heldLockCount(LockType.FAIR)).as("fair").isEqualTo(1);
        assertThat(diagnostics.heldLockCount(LockType.READ)).as("read").isEqualTo(1);
        assertThat(diagnostics.heldLockCount(LockType.WRITE)).as("write").isEqualTo(1);
        assertThat(diagnostics.heldLockCount(LockType.SEMAPHORE)).as("semaphore acquisitions").isEqualTo(1);
        assertThat(diagnostics.scheduledRenewalCount()).as("renewed: all but the fixed lease").isEqualTo(5);
        assertThat(diagnostics.localLockCount()).as("locks in use").isEqualTo(6);
        assertThat(diagnostics.toString()).contains("exclusive=2", "fair=1", "read=1", "write=1", "semaphore=1",
                "renewals=5");

        nested.release();
        permits.release();
        write.release();
        read.release();
        fair.release();
        fixedLease.release();
        exclusive.release();
        assertThat(diagnostics.heldLockCount()).isZero();
        assertThat(diagnostics.scheduledRenewalCount()).isZero();
        assertThat(diagnostics.localLockCount()).isZero();
    }

    @Test
    void aThreadThatDowngradesHoldsTwoHoldingsOfOneReadWriteLock() {
        RedisLockDiagnostics diagnostics = template.diagnostics();
        MultiLockHandle write = template.acquireAll(List.of(key), LockOptions.tryOnce(), LockType.WRITE);
        MultiLockHandle read = template.acquireAll(List.of(key), LockOptions.tryOnce(), LockType.READ);

        assertThat(diagnostics.heldLockCount()).isEqualTo(2);
        assertThat(diagnostics.localLockCount()).as("one read/write lock").isEqualTo(1);

        write.release();
        assertThat(diagnostics.heldLockCount(LockType.WRITE)).isZero();
        assertThat(diagnostics.heldLockCount(LockType.READ)).isEqualTo(1);
        read.release();
        assertThat(diagnostics.localLockCount()).isZero();
    }

    @Test
    void countsLocksOfEveryTypeThatThreadsWaitForAndNothingOnceTheyHadThem() throws Exception {
        LockHandle exclusive = other.acquire(key + ":exclusive", LockOptions.tryOnce());
        LockHandle fair = other.fairLock(key + ":fair").acquire(LockOptions.tryOnce());
        MultiLockHandle write = other.acquireAll(List.of(key + ":rw"), LockOptions.tryOnce(), LockType.WRITE);
        PermitHandle permit = other.semaphore(key + ":semaphore", 1).acquire(LockOptions.tryOnce());
        List<Future<?>> waiters = new ArrayList<>();
        waiters.add(threads.submit(() -> template.acquire(key + ":exclusive", WAIT_30S).release()));
        waiters.add(threads.submit(() -> template.fairLock(key + ":fair").acquire(WAIT_30S).release()));
        waiters.add(threads.submit(() -> template.acquireAll(List.of(key + ":rw"), WAIT_30S, LockType.READ).release()));
        waiters.add(threads.submit(() -> template.semaphore(key + ":semaphore", 1).acquire(WAIT_30S).release()));

        RedisLockDiagnostics diagnostics = template.diagnostics();
        awaitEqual(diagnostics::localLockCount, 4, "locks threads wait for");
        assertThat(diagnostics.heldLockCount()).isZero();

        permit.release();
        write.release();
        fair.release();
        exclusive.release();
        for (Future<?> waiter : waiters) {
            waiter.get(30, TimeUnit.SECONDS); // took the lock and released it
        }
        assertThat(diagnostics.localLockCount()).isZero();
        assertThat(diagnostics.heldLockCount()).isZero();
        assertThat(other.diagnostics().localLockCount()).isZero();
    }

    @Test
    void aHoldingFoundLostIsNeitherHeldNorRenewedButStaysInUseUntilItsRelease() throws Exception {
        RedisLockTemplate shortLease = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(1500)));
        CompletableFuture<String> lost = new CompletableFuture<>();
        shortLease.addLockLostListener((lock, reason) -> lost.complete(lock.key()));
        RedisLockDiagnostics diagnostics = shortLease.diagnostics();
        PermitHandle permits = shortLease.semaphore(key, 2).acquire(LockOptions.tryOnce());
        assertThat(diagnostics.heldLockCount(LockType.SEMAPHORE)).isEqualTo(1);
        assertThat(diagnostics.scheduledRenewalCount()).isEqualTo(1);

        redis.delete("redis-lock:{" + key + "}:semaphore:holders");

        assertThat(lost.get(10, TimeUnit.SECONDS)).isEqualTo(key);
        assertThat(diagnostics.heldLockCount()).isZero();
        assertThat(diagnostics.scheduledRenewalCount()).isZero();
        assertThat(diagnostics.localLockCount()).as("until the holder releases it").isEqualTo(1);
        assertThatThrownBy(permits::release).isInstanceOf(LockLostException.class);
        assertThat(diagnostics.localLockCount()).isZero();
    }

    private static void awaitEqual(IntSupplier actual, int expected, String what) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (actual.getAsInt() != expected) {
            if (System.nanoTime() > end) {
                throw new AssertionError(what + ": " + actual.getAsInt() + ", expected " + expected);
            }
            Thread.sleep(5);
        }
    }
}
