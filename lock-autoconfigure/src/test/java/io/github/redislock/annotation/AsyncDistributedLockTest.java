package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.LockHandle;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.Intervals.Interval;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.data.redis.core.StringRedisTemplate;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code @DistributedLock} on methods returning {@code CompletableFuture}/{@code CompletionStage}, {@code Mono} and
 * {@code Flux}, on a real redis-server: held from the call (reactive: the subscription) until the work ends.
 */
@WithRedis
class AsyncDistributedLockTest {

    static RedisServerProcess server;
    static final ExecutorService workers = Executors.newFixedThreadPool(4);

    @AfterAll
    static void stopWorkers() {
        workers.shutdownNow();
    }

    private void run(ContextConsumer<AssertableApplicationContext> test) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port())
                .withBean(AsyncJobs.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    test.accept(context);
                });
    }

    @Test
    void futuresOfTwoApplicationsCompletedOnWorkerThreadsNeverOverlapNorLoseAnUpdate() {
        server.command("SET", "async-counter", "0");
        List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
        int calls = 30;
        run(a -> run(b -> {
            AsyncJobs first = a.getBean(AsyncJobs.class);
            AsyncJobs second = b.getBean(AsyncJobs.class);
            StringRedisTemplate redis = a.getBean(StringRedisTemplate.class);
            List<CompletableFuture<Void>> futures = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                futures.add((i % 2 == 0 ? first : second).increment(redis, intervals));
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).orTimeout(2, TimeUnit.MINUTES).join();
            assertThat(redis.opsForValue().get("async-counter")).isEqualTo(Integer.toString(calls));
        }));
        List<Interval> sorted = new ArrayList<>(intervals);
        sorted.sort(Comparator.comparingLong(Interval::enter));
        assertThat(sorted).hasSize(calls);
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(sorted.get(i).enter()).as("call %d entered before call %d exited", i, i - 1)
                    .isGreaterThan(sorted.get(i - 1).exit());
        }
    }

    @Test
    void aFutureCompletedOnAnotherThreadReleasesTheLock() {
        run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            CompletableFuture<String> work = new CompletableFuture<>();
            CompletionStage<String> call = jobs.waitFor(work);
            RedisLockTemplate other = otherClient(context);
            awaitHeld(other, "pending");
            new Thread(() -> work.complete("done"), "completer").start();
            assertThat(call.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join()).isEqualTo("done");
            assertThat(other.tryAcquire("pending", LockOptions.tryOnce())).get().satisfies(LockHandle::release);
        });
    }

    @Test
    void aFailedFutureReleasesTheLockAndReachesTheCaller() {
        run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            assertThatThrownBy(() -> jobs.fail().get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .cause().hasMessage("boom");
            assertThat(otherClient(context).tryAcquire("failing", LockOptions.tryOnce())).get().satisfies(LockHandle::release);
        });
    }

    @Test
    void aFutureThatCannotGetTheLockFailsInsteadOfBlockingTheCaller() {
        run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            try (LockHandle held = otherClient(context).acquire("pending", LockOptions.tryOnce())) {
                long start = System.nanoTime();
                CompletionStage<String> call = jobs.waitFor(CompletableFuture.completedFuture("must not run"));
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(1000); // wait is 1s
                assertThatThrownBy(() -> call.toCompletableFuture().get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(LockNotAcquiredException.class).hasMessageContaining("'pending'");
            }
        });
    }

    @Test
    void aCancelledMonoReleasesTheLockAndTheNextAcquirerGetsIt() throws Exception {
        run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            CountDownLatch subscribed = new CountDownLatch(1);
            Mono<String> mono = jobs.never(subscribed);
            RedisLockTemplate other = otherClient(context);
            assertThat(other.tryAcquire("never", LockOptions.tryOnce())).as("not held before subscription").get()
                    .satisfies(LockHandle::release);
            Disposable subscription = mono.subscribe();
            assertThat(await(subscribed)).isTrue();
            assertThat(other.tryAcquire("never", LockOptions.tryOnce())).isEmpty();
            long start = System.nanoTime();
            subscription.dispose();
            try (LockHandle next = other.acquire("never", LockOptions.waitFor(Duration.ofSeconds(30)))) {
                System.out.println("@DistributedLock Mono cancelled: the next acquirer waited "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
                assertThat(next.isHeld()).isTrue();
            }
        });
    }

    @Test
    void aFailingMonoReleasesTheLock() {
        run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            assertThatThrownBy(() -> jobs.monoFail().block(Duration.ofSeconds(30))).hasMessage("boom");
            assertThat(otherClient(context).tryAcquire("failing", LockOptions.tryOnce())).get().satisfies(LockHandle::release);
        });
    }

    @Test
    void aFluxHoldsTheLockUntilItCompletesAndSeesItsFencingToken() {
        run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            Sinks.Many<Long> values = Sinks.many().unicast().onBackpressureBuffer();
            List<Long> seen = Collections.synchronizedList(new ArrayList<>());
            CompletableFuture<Void> done = new CompletableFuture<>();
            jobs.values(values, 0).doOnNext(seen::add).doOnComplete(() -> done.complete(null)).subscribe();
            RedisLockTemplate other = otherClient(context);
            awaitHeld(other, "flux");
            values.tryEmitNext(7L);
            assertThat(other.tryAcquire("flux", LockOptions.tryOnce())).isEmpty();
            values.tryEmitComplete();
            done.orTimeout(30, TimeUnit.SECONDS).join();
            assertThat(seen).hasSize(2).contains(7L);
            assertThat(seen.get(0)).as("the @FencingToken the method received").isPositive();
            assertThat(other.tryAcquire("flux", LockOptions.tryOnce())).get().satisfies(LockHandle::release);
        });
    }

    @Test
    void aSkippedMonoIsEmptyAndNeverRuns() {
        run(context -> {
            AsyncJobs jobs = context.getBean(AsyncJobs.class);
            try (LockHandle held = otherClient(context).acquire("skip", LockOptions.tryOnce())) {
                assertThat(jobs.skipping().blockOptional(Duration.ofSeconds(30))).isEmpty();
            }
            assertThat(jobs.skipping().block(Duration.ofSeconds(30))).isEqualTo("ran");
        });
    }

    /** Another client of the same Redis: another owner, closed with the context. */
    private static RedisLockTemplate otherClient(AssertableApplicationContext context) {
        RedisLockTemplate other = new RedisLockTemplate(context.getBean(StringRedisTemplate.class));
        ((org.springframework.beans.factory.support.DefaultListableBeanFactory) context.getBeanFactory())
                .registerDisposableBean("otherClient" + System.nanoTime(), other::close);
        return other;
    }

    private static void awaitHeld(RedisLockTemplate other, String key) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            var handle = other.tryAcquire(key, LockOptions.tryOnce());
            if (handle.isEmpty()) {
                return;
            }
            handle.get().release();
            assertThat(System.nanoTime()).as("%s held within 30s", key).isLessThan(end);
            Thread.onSpinWait();
        }
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    static class AsyncJobs {

        @DistributedLock(key = "'async-counter'", waitTime = "30s")
        public CompletableFuture<Void> increment(StringRedisTemplate redis, List<Interval> intervals) {
            return CompletableFuture.runAsync(() -> {
                long enter = System.nanoTime();
                long value = Long.parseLong(redis.opsForValue().get("async-counter"));
                sleep(2);
                redis.opsForValue().set("async-counter", Long.toString(value + 1));
                intervals.add(new Interval(enter, System.nanoTime()));
            }, workers);
        }

        @DistributedLock(key = "'pending'", waitTime = "1s")
        public CompletionStage<String> waitFor(CompletableFuture<String> work) {
            return work;
        }

        @DistributedLock(key = "'failing'")
        public CompletableFuture<String> fail() {
            return CompletableFuture.supplyAsync(() -> {
                throw new IllegalStateException("boom");
            }, workers);
        }

        @DistributedLock(key = "'failing'")
        public Mono<String> monoFail() {
            return Mono.error(new IllegalStateException("boom"));
        }

        @DistributedLock(key = "'never'")
        public Mono<String> never(CountDownLatch subscribed) {
            return Mono.<String>never().doOnSubscribe(s -> subscribed.countDown());
        }

        @DistributedLock(key = "'flux'")
        public Flux<Long> values(Sinks.Many<Long> values, @FencingToken long token) {
            return Flux.concat(Mono.just(token), values.asFlux());
        }

        @DistributedLock(key = "'skip'", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Mono<String> skipping() {
            return Mono.just("ran");
        }

        private static void sleep(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
