package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.github.redislock.test.Intervals.Interval;
import io.github.redislock.test.PerTest;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * {@link RedisLockTemplate#executeAsync} and {@link ReactiveRedisLocks} on a real redis-server: the lock is held from
 * the call (or subscription) until the work ends on whichever thread, and released then.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class AsyncLockTest {

    private static final LockOptions WAIT_LONG = LockOptions.waitFor(Duration.ofSeconds(30));
    private static final ExecutorService workers = Executors.newFixedThreadPool(4);

    static RedisServerProcess server;
    static RedisLockTemplate first;
    static RedisLockTemplate second;
    static StringRedisTemplate redis;

    @PerTest
    String key;

    @AfterAll
    static void stopWorkers() {
        workers.shutdownNow();
    }

    @Test
    void futuresCompletedOnOtherThreadsOverTwoClientsNeverOverlapNorLoseAnUpdate() throws Exception {
        String counter = "counter:" + key;
        redis.opsForValue().set(counter, "0");
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> calls = new ArrayList<>();
        int calls_ = 40;
        long start = System.nanoTime();
        for (int i = 0; i < calls_; i++) {
            RedisLockTemplate template = i % 2 == 0 ? first : second;
            calls.add(template.executeAsync(key, WAIT_LONG, () -> CompletableFuture.runAsync(() -> {
                long enter = System.nanoTime();
                long value = Long.parseLong(redis.opsForValue().get(counter));
                pause(2);
                redis.opsForValue().set(counter, Long.toString(value + 1));
                intervals.add(new Interval(enter, System.nanoTime()));
            }, workers)));
        }
        long returnedAfter = System.nanoTime() - start;
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf("%d async calls on one key over two clients: all %d returned to the caller in %d ms, "
                + "completed in %d ms%n", calls_, calls_, TimeUnit.NANOSECONDS.toMillis(returnedAfter), tookMillis);
        assertThat(redis.opsForValue().get(counter)).isEqualTo(Integer.toString(calls_));
        assertNoOverlap(intervals, calls_);
        assertThat(first.diagnostics().localLockCount() + second.diagnostics().localLockCount()).isZero();
    }

    @Test
    void theCallerIsNotBlockedWhileAnotherOwnerHoldsTheLock() throws Exception {
        LockHandle held = second.acquire(key, LockOptions.tryOnce());
        long start = System.nanoTime();
        CompletableFuture<String> call = first.executeAsync(key, WAIT_LONG, () -> CompletableFuture.completedFuture("ran"));
        long returnedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(call).isNotDone();
        System.out.println("executeAsync returned in " + returnedMillis + " ms while the lock was held elsewhere");
        assertThat(returnedMillis).isLessThan(WAIT_LONG.waitTime().toMillis());
        held.release();
        assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo("ran");
    }

    @Test
    void aFutureCompletedOnAnotherThreadReleasesTheLockThere() throws Exception {
        CompletableFuture<String> work = new CompletableFuture<>();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<String> call = first.executeAsync(key, WAIT_LONG, () -> {
            started.countDown();
            return work;
        });
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
        Thread completer = new Thread(() -> work.complete("done"), "completer");
        completer.start();
        assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo("done");
        try (LockHandle next = second.acquire(key, LockOptions.tryOnce())) {
            assertThat(next.isHeld()).isTrue();
        }
    }

    @Test
    void aFailedFutureReleasesTheLockAndFailsTheCall() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        CompletableFuture<String> call = first.executeAsync(key, WAIT_LONG,
                () -> CompletableFuture.supplyAsync(() -> { throw boom; }, workers));
        assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).hasCause(boom);
        try (LockHandle next = second.acquire(key, LockOptions.tryOnce())) {
            assertThat(next.isHeld()).isTrue();
        }
    }

    @Test
    void aCancelledCallCancelsItsFutureAndReleasesTheLock() throws Exception {
        CompletableFuture<String> work = new CompletableFuture<>();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<String> call = first.executeAsync(key, WAIT_LONG, () -> {
            started.countDown();
            return work;
        });
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        call.cancel(true);
        assertThatThrownBy(() -> work.get(30, TimeUnit.SECONDS)).isInstanceOf(CancellationException.class);
        assertThat(second.tryAcquire(key, WAIT_LONG)).get().satisfies(LockHandle::release);
    }

    @Test
    void aCallCancelledWhileWaitingNeverRunsAndLeavesNothingHeld() throws Exception {
        CompletableFuture<String> call;
        try (LockHandle held = second.acquire(key, LockOptions.tryOnce())) {
            call = first.executeAsync(key, WAIT_LONG, () -> CompletableFuture.completedFuture("must not run"));
            call.cancel(true);
        }
        try (LockHandle again = first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
            assertThat(again.isHeld()).isTrue();
        }
        assertThat(call).isCancelled();
    }

    @Test
    void aCallThatCannotGetTheLockFailsWithLockNotAcquired() {
        try (LockHandle held = second.acquire(key, LockOptions.tryOnce())) {
            CompletableFuture<String> call = first.executeAsync(key, LockOptions.waitFor(Duration.ofMillis(200)),
                    () -> CompletableFuture.completedFuture("must not run"));
            assertThatThrownBy(() -> call.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(LockNotAcquiredException.class)
                    .hasMessageContaining("'" + key + "'");
        }
    }

    @Test
    void aMonoHoldsTheLockFromSubscriptionUntilItCompletes() {
        ReactiveRedisLocks reactive = new ReactiveRedisLocks(first);
        AtomicReference<String> thread = new AtomicReference<>();
        Mono<String> mono = reactive.mono(key, WAIT_LONG, () -> Mono.fromCallable(() -> {
            thread.set(Thread.currentThread().getName());
            return second.tryAcquire(key, LockOptions.tryOnce()).isPresent() ? "not locked" : "locked";
        }).subscribeOn(Schedulers.parallel()));
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).get().satisfies(LockHandle::release); // not yet subscribed
        assertThat(mono.block(Duration.ofSeconds(30))).isEqualTo("locked");
        assertThat(thread.get()).startsWith("parallel");
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).get().satisfies(LockHandle::release);
    }

    @Test
    void aCancelledMonoReleasesTheLockAndTheNextAcquirerGetsItAtOnce() throws Exception {
        ReactiveRedisLocks reactive = new ReactiveRedisLocks(first);
        CountDownLatch subscribed = new CountDownLatch(1);
        Disposable subscription = reactive.mono(key, WAIT_LONG, () -> Mono.never().doOnSubscribe(s -> subscribed.countDown()))
                .subscribe();
        assertThat(subscribed.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty();
        listenForReleases(second);
        long start = System.nanoTime();
        subscription.dispose();
        try (LockHandle next = second.acquire(key, WAIT_LONG)) {
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            System.out.println("after a cancelled Mono the next acquirer waited " + waitedMillis + " ms (lease 30000 ms)");
            assertThat(waitedMillis).isLessThan(first.config().watchdogLease().toMillis() / 3);
        }
    }

    @Test
    void aMonoCancelledWhileWaitingForTheLockNeverRunsAndLeavesNothingHeld() throws Exception {
        ReactiveRedisLocks reactive = new ReactiveRedisLocks(first);
        CountDownLatch ran = new CountDownLatch(1);
        Disposable subscription;
        try (LockHandle held = second.acquire(key, LockOptions.tryOnce())) {
            subscription = reactive.mono(key, WAIT_LONG, () -> Mono.fromRunnable(ran::countDown)).subscribe();
            subscription.dispose();
        }
        try (LockHandle again = first.acquire(key, LockOptions.waitFor(Duration.ofSeconds(10)))) {
            assertThat(again.isHeld()).isTrue();
        }
        assertThat(ran.getCount()).isEqualTo(1);
    }

    @Test
    void aFailingMonoReleasesTheLockAndDeliversItsError() {
        ReactiveRedisLocks reactive = new ReactiveRedisLocks(first);
        IllegalStateException boom = new IllegalStateException("boom");
        assertThatThrownBy(() -> reactive.mono(key, WAIT_LONG, () -> Mono.<String>error(boom)).block(Duration.ofSeconds(30)))
                .isSameAs(boom);
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).get().satisfies(LockHandle::release);
    }

    @Test
    void aFluxHoldsTheLockUntilItCompletes() {
        ReactiveRedisLocks reactive = new ReactiveRedisLocks(first);
        Sinks.Many<Integer> values = Sinks.many().unicast().onBackpressureBuffer();
        List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> done = new CompletableFuture<>();
        reactive.flux(key, WAIT_LONG, values::asFlux).doOnNext(seen::add).doOnComplete(() -> done.complete(null)).subscribe();
        await(() -> second.tryAcquire(key, LockOptions.tryOnce()).map(h -> { h.release(); return false; }).orElse(true));
        values.tryEmitNext(1);
        values.tryEmitNext(2);
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).isEmpty(); // values flowed, still held
        values.tryEmitComplete();
        done.join();
        assertThat(seen).containsExactly(1, 2);
        assertThat(second.tryAcquire(key, LockOptions.tryOnce())).get().satisfies(LockHandle::release);
    }

    @Test
    void fluxesSubscribedOnManyThreadsNeverOverlap() {
        ReactiveRedisLocks firstReactive = new ReactiveRedisLocks(first);
        ReactiveRedisLocks secondReactive = new ReactiveRedisLocks(second);
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        int subscriptions = 20;
        Flux.range(0, subscriptions).flatMap(i -> (i % 2 == 0 ? firstReactive : secondReactive).flux(key, WAIT_LONG,
                () -> Flux.defer(() -> {
                    long enter = System.nanoTime();
                    return Flux.range(0, 3).delayElements(Duration.ofMillis(1))
                            .doOnComplete(() -> intervals.add(new Interval(enter, System.nanoTime())));
                })), subscriptions).blockLast(Duration.ofMinutes(1));
        assertNoOverlap(intervals, subscriptions);
    }

    /** Has the client subscribe to release notices now, as its first wait would, so that is not what a test times. */
    private void listenForReleases(RedisLockTemplate client) {
        try (LockHandle held = (client == first ? second : first).acquire("warm:" + key, LockOptions.tryOnce())) {
            assertThat(client.tryAcquire("warm:" + key, LockOptions.waitFor(Duration.ofMillis(100)))).isEmpty();
        }
    }

    static void assertNoOverlap(List<Interval> intervals, int expected) {
        List<Interval> sorted = new ArrayList<>(intervals);
        sorted.sort(Comparator.comparingLong(Interval::enter));
        assertThat(sorted).hasSize(expected);
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(sorted.get(i).enter()).as("section %d entered before section %d exited", i, i - 1)
                    .isGreaterThan(sorted.get(i - 1).exit());
        }
    }

    private static void await(java.util.function.BooleanSupplier condition) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition within 30s").isLessThan(end);
            pause(5);
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
