package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.github.redislock.test.Intervals;
import io.github.redislock.test.Intervals.Interval;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The bounded holder threads of asynchronous locks on Java 17-20 ({@code redis-lock.async.max-holders} and
 * {@code holder-wait}): at most that many platform threads hold or wait for locks, a call finding none free queues
 * without blocking its caller and runs once one is, or fails after the holder wait naming the property. The
 * template-level tests run on a real redis-server and only where holders are platform threads (on Java 21+ they are
 * unbounded virtual threads); the executor's own queueing is checked on every JDK.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class AsyncHolderThreadsTest {

    private static final LockOptions WAIT_LONG = LockOptions.waitFor(Duration.ofSeconds(30));
    private static final ExecutorService workers = Executors.newFixedThreadPool(4);

    static RedisServerProcess server;
    static RedisClients clients;
    static StringRedisTemplate redis;
    static RedisLockTemplate other;

    @PerTest
    String key;

    @AfterAll
    static void stopWorkers() {
        workers.shutdownNow();
    }

    private static RedisLockTemplate boundedTemplate(int maxHolders, Duration holderWait) {
        assumeFalse(AsyncLockExecutor.usesVirtualThreads(), "holders are unbounded virtual threads on this JDK");
        return clients.lockTemplate(RedisLockConfig.defaults().withAsyncHolders(maxHolders, holderWait));
    }

    @Test
    void aCallFindingEveryHolderBusyFailsAfterTheHolderWaitNamingTheProperties() throws Exception {
        RedisLockTemplate template = boundedTemplate(2, Duration.ofMillis(300));
        CompletableFuture<String> firstWork = new CompletableFuture<>();
        CompletableFuture<String> secondWork = new CompletableFuture<>();
        CompletableFuture<String> first = template.executeAsync(key + ":1", WAIT_LONG, () -> firstWork);
        CompletableFuture<String> second = template.executeAsync(key + ":2", WAIT_LONG, () -> secondWork);
        awaitHeld(key + ":1");
        awaitHeld(key + ":2");

        CountDownLatch ran = new CountDownLatch(1);
        CompletableFuture<String> third = template.executeAsync(key + ":3", WAIT_LONG, () -> {
            ran.countDown();
            return CompletableFuture.completedFuture("must not run");
        });
        assertThat(third).as("returned to the caller before the holder wait ended").isNotDone();
        assertThatThrownBy(() -> third.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("within 300ms (redis-lock.async.holder-wait)")
                .hasMessageContaining("all 2 (redis-lock.async.max-holders)");
        assertThat(ran.getCount()).as("the rejected call's work never started").isOne();
        assertThat(other.tryAcquire(key + ":3", LockOptions.tryOnce())).as("its lock never taken").get()
                .satisfies(LockHandle::release);

        firstWork.complete("one");
        secondWork.complete("two");
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("one");
        assertThat(second.get(30, TimeUnit.SECONDS)).isEqualTo("two");
        assertThat(template.executeAsync(key + ":3", WAIT_LONG, () -> CompletableFuture.completedFuture("now"))
                .get(30, TimeUnit.SECONDS)).as("holders are free again").isEqualTo("now");
    }

    @Test
    void aQueuedCallRunsOnceAHolderIsFree() throws Exception {
        RedisLockTemplate template = boundedTemplate(1, Duration.ofSeconds(30));
        CompletableFuture<String> firstWork = new CompletableFuture<>();
        CompletableFuture<String> first = template.executeAsync(key + ":1", WAIT_LONG, () -> firstWork);
        awaitHeld(key + ":1");
        CountDownLatch ran = new CountDownLatch(1);
        CompletableFuture<String> queued = template.executeAsync(key + ":2", WAIT_LONG, () -> {
            ran.countDown();
            return CompletableFuture.completedFuture("ran");
        });
        assertThat(ran.await(200, TimeUnit.MILLISECONDS)).as("ran while the only holder was busy").isFalse();
        assertThat(queued).isNotDone();
        firstWork.complete("done");
        assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(queued.get(30, TimeUnit.SECONDS)).isEqualTo("ran");
    }

    @Test
    void manyMoreCallsThanHoldersAllCompleteExcludeEachOtherAndUseAtMostMaxHoldersThreads() throws Exception {
        RedisLockTemplate template = boundedTemplate(3, Duration.ofSeconds(60));
        String counter = "counter:" + key;
        redis.opsForValue().set(counter, "0");
        int calls = 24;
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        Set<String> holderThreads = ConcurrentHashMap.newKeySet();
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            futures.add(template.executeAsync(key, WAIT_LONG, () -> {
                holderThreads.add(Thread.currentThread().getName()); // the action starts on the holder thread
                return CompletableFuture.runAsync(() -> {
                    long enter = System.nanoTime();
                    long value = Long.parseLong(redis.opsForValue().get(counter));
                    pause(2);
                    redis.opsForValue().set(counter, Long.toString(value + 1));
                    intervals.add(new Interval(enter, System.nanoTime()));
                }, workers);
            }));
        }
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
        assertThat(redis.opsForValue().get(counter)).isEqualTo(Integer.toString(calls));
        assertThat(Intervals.maxConcurrency(intervals, Interval::enter, Interval::exit)).isEqualTo(1);
        assertThat(holderThreads).as("holder threads used").isNotEmpty().hasSizeLessThanOrEqualTo(3)
                .allSatisfy(name -> assertThat(name).startsWith("redis-lock-async-"));
    }

    @Test
    void theExecutorQueuesWithoutBlockingAndRejectsOnlyRejectableTasksAfterTheWait() throws Exception {
        BoundedHolderThreads holders = new BoundedHolderThreads(2, Duration.ofMillis(200));
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch bothRunning = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            holders.execute(() -> {
                bothRunning.countDown();
                await(release);
            });
        }
        assertThat(bothRunning.await(30, TimeUnit.SECONDS)).isTrue();

        AtomicReference<RuntimeException> rejected = new AtomicReference<>();
        CountDownLatch rejectedLatch = new CountDownLatch(1);
        CountDownLatch rejectableRan = new CountDownLatch(1);
        holders.execute(new AsyncLockExecutor.Rejectable() {
            @Override
            public void run() {
                rejectableRan.countDown();
            }

            @Override
            public void reject(RuntimeException reason) {
                rejected.set(reason);
                rejectedLatch.countDown();
            }
        });
        CountDownLatch plainRan = new CountDownLatch(1);
        holders.execute(plainRan::countDown); // returns at once although no holder is free
        assertThat(holders.busyAndQueued()).containsExactly(2, 2);

        assertThat(rejectedLatch.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(rejected.get()).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("redis-lock.async.max-holders");
        assertThat(holders.busyAndQueued()).as("the rejected task left the queue").containsExactly(2, 1);

        release.countDown();
        assertThat(plainRan.await(30, TimeUnit.SECONDS)).as("the plain task ran once a holder was free").isTrue();
        assertThat(rejectableRan.getCount()).as("the rejected task never ran").isOne();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (holders.busyAndQueued()[0] > 0 && System.nanoTime() < end) {
            Thread.sleep(5);
        }
        assertThat(holders.busyAndQueued()).as("every holder slot freed").containsExactly(0, 0);
    }

    private static void awaitHeld(String key) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            var handle = other.tryAcquire(key, LockOptions.tryOnce());
            if (handle.isEmpty()) {
                return;
            }
            handle.get().release();
            assertThat(System.nanoTime()).as("%s held within 30s", key).isLessThan(end);
            pause(1);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
