package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.github.redislock.autoconfigure.metrics.RedisLockMetrics;
import io.github.redislock.autoconfigure.metrics.RedisLockObservations;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The Micrometer binding of the observer SPI on a template against a real redis-server: what each meter records is
 * compared with what the test itself measured around the calls.
 */
@WithRedis
@ExtendWith(RedisClientsExtension.class)
class LockMetricsTest {

    static RedisServerProcess server;
    RedisClients clients;
    StringRedisTemplate redis;
    RedisLockTemplate other;

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    RedisLockTemplate template;

    @BeforeEach
    void observedTemplate() {
        template = clients.lockTemplate();
        new RedisLockMetrics(meters, java.util.Map.of("redisLockTemplate", template));
    }

    @Test
    void aWaitThatEndsWithTheLockIsTimedAsAcquiredUnderItsNameAndTheHoldAsHeld() throws Exception {
        LockHandle blocker = other.acquire("metrics:acquired", LockOptions.tryOnce());
        CompletableFuture<long[]> waiter = CompletableFuture.supplyAsync(() -> {
            long waitStart = System.nanoTime();
            LockHandle handle = template.acquire("metrics:acquired", LockOptions.waitFor(Duration.ofSeconds(20)).withName("orders"));
            long acquiredAt = System.nanoTime();
            long releaseAt = System.nanoTime();
            handle.release();
            return new long[] {acquiredAt, releaseAt, System.nanoTime(), waitStart};
        });
        awaitTrue(() -> template.diagnostics().waiters().size() == 1, "the caller to wait");
        assertThat(template.diagnostics().waiters().get(0).name()).isEqualTo("orders");
        long releasedAt = System.nanoTime();
        blocker.release();
        long[] times = waiter.get(20, TimeUnit.SECONDS);
        long waitStart = times[3];

        Timer acquired = meters.get("redis.lock.acquire").tag("name", "orders").tag("outcome", "acquired").timer();
        assertThat(acquired.count()).isEqualTo(1);
        assertThat(acquired.totalTime(TimeUnit.NANOSECONDS)).as("at least until the other owner released")
                .isGreaterThanOrEqualTo(releasedAt - waitStart - TimeUnit.MILLISECONDS.toNanos(5))
                .isLessThanOrEqualTo(times[0] - waitStart);
        Timer held = meters.get("redis.lock.held").tag("name", "orders").timer();
        assertThat(held.count()).isEqualTo(1);
        assertThat(held.totalTime(TimeUnit.NANOSECONDS)).isGreaterThanOrEqualTo(times[1] - times[0])
                .isLessThanOrEqualTo(times[2] - waitStart);
        System.out.printf("acquire timer: %.1f ms (the other owner released %.1f ms into the wait); held timer %.3f ms%n",
                acquired.totalTime(TimeUnit.MICROSECONDS) / 1000.0, (releasedAt - waitStart) / 1e6,
                held.totalTime(TimeUnit.MICROSECONDS) / 1000.0);
        assertThat(template.diagnostics().waiters()).isEmpty();
    }

    @Test
    void aWaitThatRunsOutIsTimedAsTimeoutAndACallWithoutNameIsUnnamed() {
        try (LockHandle blocker = other.acquire("metrics:timeout", LockOptions.tryOnce())) {
            Duration wait = Duration.ofMillis(300);
            assertThat(template.tryAcquire("metrics:timeout", LockOptions.waitFor(wait))).isEmpty();
            Timer timeout = meters.get("redis.lock.acquire").tag("name", LockObserver.UNNAMED).tag("outcome", "timeout").timer();
            assertThat(timeout.count()).isEqualTo(1);
            assertThat(timeout.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(wait.toMillis());
            assertThat(meters.find("redis.lock.acquire").tag("outcome", "acquired").timer()).isNull();
            assertThat(meters.find("redis.lock.held").timer()).as("nothing was held").isNull();
        }
    }

    @Test
    void aWaitEndedByRedisFailingIsTimedAsError() {
        template.acquire("warm-up", LockOptions.tryOnce()).release();
        server.pause(); // SIGSTOP: nothing is answered
        try {
            assertThatThrownBy(() -> template.acquire("metrics:error", LockOptions.waitFor(Duration.ofMillis(200)).withName("jobs")))
                    .isInstanceOf(LockNotAcquiredException.class);
        } finally {
            server.resume();
        }
        assertThat(meters.get("redis.lock.acquire").tag("name", "jobs").tag("outcome", "error").timer().count()).isEqualTo(1);
    }

    @Test
    void theActiveGaugeCountsTheLocksHeldNow() {
        assertThat(meters.get("redis.lock.active").tag("locks", "redisLockTemplate").gauge().value()).isZero();
        LockHandle first = template.acquire("metrics:active:1", LockOptions.tryOnce());
        MultiLockHandle both = template.acquireAll(java.util.List.of("metrics:active:2", "metrics:active:3"), LockOptions.tryOnce());
        assertThat(meters.get("redis.lock.active").tag("locks", "redisLockTemplate").gauge().value()).isEqualTo(3);
        both.release();
        assertThat(meters.get("redis.lock.active").tag("locks", "redisLockTemplate").gauge().value()).isEqualTo(1);
        first.release();
        assertThat(meters.get("redis.lock.active").tag("locks", "redisLockTemplate").gauge().value()).isZero();
    }

    @Test
    void renewalsAreCountedAndALockFoundGoneCountsAsLost() {
        RedisLockTemplate shortLease = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(900)));
        new RedisLockMetrics(meters, java.util.Map.of("shortLease", shortLease));
        LockHandle handle = shortLease.acquire("metrics:lost", LockOptions.tryOnce().withName("reports"));
        awaitTrue(() -> count("redis.lock.renewals", "renewed") >= 2, "two renewals");
        assertThat(handle.isHeld()).isTrue();

        redis.delete("redis-lock:{metrics:lost}");
        awaitTrue(() -> !handle.isHeld(), "the watchdog to find the lock gone");
        awaitTrue(() -> meters.find("redis.lock.lost").tag("name", "reports").counter() != null, "the loss to be counted");
        awaitTrue(() -> count("redis.lock.renewals", "lost") > 0, "the renewal that found it gone to be counted");
        assertThat(meters.get("redis.lock.lost").tag("name", "reports").counter().count()).isEqualTo(1);
        assertThat(count("redis.lock.renewals", "lost")).isEqualTo(1);
        assertThatThrownBy(handle::release).isInstanceOf(LockLostException.class);
        assertThat(meters.get("redis.lock.held").tag("name", "reports").timer().count()).as("the hold ended all the same")
                .isEqualTo(1);
        System.out.printf("renewals counted: %.0f renewed, %.0f lost%n", count("redis.lock.renewals", "renewed"),
                count("redis.lock.renewals", "lost"));
    }

    @Test
    void anAsynchronousExecutionIsMeasuredLikeABlockingOne() throws Exception {
        String result = template.executeAsync("metrics:async", LockOptions.waitFor(Duration.ofSeconds(5)).withName("async"),
                () -> CompletableFuture.supplyAsync(() -> "done")).get(20, TimeUnit.SECONDS);
        assertThat(result).isEqualTo("done");
        assertThat(meters.get("redis.lock.acquire").tag("name", "async").tag("outcome", "acquired").timer().count()).isEqualTo(1);
        awaitTrue(() -> meters.find("redis.lock.held").tag("name", "async").timer() != null, "the hold to be timed");
        assertThat(meters.get("redis.lock.held").tag("name", "async").timer().count()).isEqualTo(1);
    }

    @Test
    void aLostSemaphorePermitIsCountedUnderItsName() {
        RedisLockTemplate shortLease = clients.lockTemplate(RedisLockConfig.defaults().withWatchdogLease(Duration.ofMillis(900)));
        new RedisLockMetrics(meters, java.util.Map.of("shortLease", shortLease));
        PermitHandle permit = shortLease.semaphore("metrics:printers", 2).acquire(LockOptions.tryOnce().withName("printers"));
        assertThat(permit.permits()).isEqualTo(1);
        assertThat(shortLease.diagnostics().heldLocks()).singleElement()
                .satisfies(held -> assertThat(held.type()).isEqualTo(LockType.SEMAPHORE));

        redis.delete(java.util.List.of("redis-lock:{metrics:printers}:semaphore:holders", "redis-lock:{metrics:printers}:semaphore:permits"));
        awaitTrue(() -> !permit.isHeld(), "the watchdog to find the permit gone");
        awaitTrue(() -> meters.find("redis.lock.lost").tag("name", "printers").counter() != null, "the loss to be counted");
        assertThatThrownBy(permit::release).isInstanceOf(LockLostException.class);
    }

    @Test
    void eachWaitIsAnObservationThatTracingSeesAsASpan() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        new RedisLockObservations(observations, java.util.Map.of("redisLockTemplate", template));
        template.acquire("metrics:observed", LockOptions.tryOnce().withName("payments")).release();
        try (LockHandle blocker = other.acquire("metrics:observed", LockOptions.tryOnce())) {
            assertThat(template.tryAcquire("metrics:observed", LockOptions.tryOnce().withName("payments"))).isEmpty();
        }

        TestObservationRegistryAssert.assertThat(observations).hasNumberOfObservationsWithNameEqualTo("redis.lock.wait", 2)
                .hasAnObservation(observation -> observation.hasContextualNameEqualTo("lock wait payments")
                        .hasLowCardinalityKeyValue("redis.lock.name", "payments")
                        .hasLowCardinalityKeyValue("redis.lock.outcome", "acquired")
                        .hasHighCardinalityKeyValue("redis.lock.key", "metrics:observed"))
                .hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("redis.lock.outcome", "timeout"));
        TestObservationRegistryAssert.assertThat(observations).hasObservationWithNameEqualTo("redis.lock.wait").that()
                .hasBeenStarted().hasBeenStopped();
    }

    private double count(String name, String outcome) {
        var counter = meters.find(name).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    private static void awaitTrue(BooleanSupplier condition, String what) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
