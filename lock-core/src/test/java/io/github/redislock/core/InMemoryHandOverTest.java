package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import io.github.redislock.test.Await;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A hand-over in Redis reserves fencing tokens, and for a short window after it the lock passes from thread to thread
 * of the same client in memory: exclusion, increasing tokens, other clients' precedence and loss detection still hold.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class InMemoryHandOverTest {

    static RedisServerProcess server;
    static RedisClients clients;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    @PerTest
    String key;

    @Test
    void sixteenThreadsOfOneClientAndFourOfAnotherNeverLoseAnUpdateAndSeeStrictlyIncreasingTokens() throws Exception {
        long[] counter = {0};
        List<Long> tokens = new ArrayList<>(); // appended under the lock: in acquisition order
        int rounds = 200;
        ExecutorService pool = Executors.newFixedThreadPool(20);
        List<Future<?>> futures = new ArrayList<>();
        long scriptsBefore = scriptCalls();
        for (int t = 0; t < 20; t++) {
            RedisLockTemplate template = t < 16 ? first : second;
            futures.add(pool.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    try (LockHandle handle = template.acquire(key, LockOptions.waitFor(Duration.ofSeconds(60)))) {
                        long value = counter[0];
                        Thread.yield(); // widen the window a second holder would need
                        counter[0] = value + 1;
                        tokens.add(handle.fencingToken());
                    }
                }
                return null;
            }));
        }
        for (Future<?> future : futures) {
            future.get(3, TimeUnit.MINUTES);
        }
        pool.shutdown();
        long cycles = 20L * rounds;
        long scripts = scriptCalls() - scriptsBefore;
        System.out.println(cycles + " lock cycles of 16 + 4 threads of two clients on one key took " + scripts + " script calls");
        assertThat(counter[0]).isEqualTo(cycles);
        assertThat(tokens).hasSize((int) cycles);
        long passedInMemory = 0;
        for (int i = 1; i < tokens.size(); i++) {
            assertThat(tokens.get(i)).as("token %d after %d", i, tokens.get(i - 1)).isGreaterThan(tokens.get(i - 1));
            passedInMemory += tokens.get(i) == tokens.get(i - 1) + 1 ? 1 : 0;
        }
        assertThat(passedInMemory).as("acquisitions that took the next reserved token").isPositive();
        assertThat(redis.hasKey(lockKey())).isFalse();
        assertThat(first.diagnostics().localLockCount()).isZero();
    }

    @Test
    void aClientWaitingWhileEightThreadsOfAnotherHammerTheKeyStillGetsTheLock() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        long[] cycles = new long[8];
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> hammers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int thread = t;
            hammers.add(pool.submit(() -> {
                while (!stop.get()) {
                    first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(60))).release();
                    cycles[thread]++;
                }
                return null;
            }));
        }
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (java.util.Arrays.stream(cycles).sum() < 500 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            for (int round = 0; round < 5; round++) {
                // without other clients' precedence the hammering threads would pass the lock among themselves for ever
                try (LockHandle handle = second.acquire(key, LockOptions.waitFor(Duration.ofSeconds(5)))) {
                    assertThat(handle.isHeld()).isTrue();
                }
            }
        } finally {
            stop.set(true);
            for (Future<?> hammer : hammers) {
                hammer.get(1, TimeUnit.MINUTES);
            }
            pool.shutdown();
        }
        assertThat(redis.hasKey(lockKey())).isFalse();
    }

    @Test
    void aLockLostAfterItPassedInMemoryIsReportedToItsHolder() throws Exception {
        RedisLockTemplate shortLease = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(900)));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 50; round++) {
                LockHandle held = shortLease.acquire(key, LockOptions.tryOnce());
                CountDownLatch release = new CountDownLatch(1);
                AtomicBoolean deleted = new AtomicBoolean();
                // the first takes the hand-over in Redis and releases at once; the second then takes it in memory
                Future<Long> viaRedis = pool.submit(() -> {
                    try (LockHandle handle = shortLease.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
                        return handle.fencingToken();
                    }
                });
                LocalQueue.awaitQueued(shortLease, key, 1);
                Future<String> inMemory = pool.submit(() -> {
                    LockHandle handle = shortLease.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)));
                    release.await();
                    if (deleted.get()) {
                        awaitTrue(() -> !handle.isHeld());
                    }
                    try {
                        handle.release();
                        return "released";
                    } catch (LockLostException e) {
                        return "lost";
                    }
                });
                LocalQueue.awaitQueued(shortLease, key, 2);
                held.release();
                long redisToken = viaRedis.get(10, TimeUnit.SECONDS);
                awaitTrue(() -> shortLease.localLock(key).mutex.isLocked() && !shortLease.localLock(key).mutex.hasQueuedThreads()
                        && shortLease.localLock(key).token != redisToken);
                if (shortLease.localLock(key).token != redisToken + 1) {
                    release.countDown(); // the second came after the window: it was handed over in Redis
                    assertThat(inMemory.get(10, TimeUnit.SECONDS)).isEqualTo("released");
                    continue;
                }
                redis.delete(lockKey());
                deleted.set(true);
                release.countDown();
                assertThat(inMemory.get(10, TimeUnit.SECONDS)).isEqualTo("lost");
                return;
            }
            throw new AssertionError("no release within the window passed the lock on in memory in 50 rounds");
        } finally {
            pool.shutdownNow();
        }
    }

    static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        Await.until(condition, Duration.ofSeconds(5), "the condition");
    }

    private long scriptCalls() {
        return server.command("INFO", "commandstats").lines()
                .filter(line -> line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:"))
                .mapToLong(line -> Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(','))))
                .sum();
    }

    private String lockKey() {
        return "redis-lock:{" + key + "}";
    }
}
