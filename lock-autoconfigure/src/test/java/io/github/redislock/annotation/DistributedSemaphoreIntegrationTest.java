package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.BiConsumer;

import io.github.redislock.test.Concurrently;
import io.github.redislock.test.Intervals;
import io.github.redislock.test.Intervals.Interval;
import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.PermitHandle;
import io.github.redislock.core.RedisLockTemplate;
import io.github.redislock.test.RedisServerProcess;
import io.github.redislock.test.WithRedis;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code @DistributedLock(permits = N)}: a semaphore per key, through the annotation, on a real redis-server. */
@WithRedis
class DistributedSemaphoreIntegrationTest {

    static RedisServerProcess server;

    /** Runs {@code test} with two applications on the same Redis, as two instances of one service. */
    private void runTwo(BiConsumer<AssertableApplicationContext, AssertableApplicationContext> test) {
        ApplicationContextRunner runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.port=" + server.port())
                .withBean(Pool.class);
        runner.run(a -> runner.run(b -> {
            assertThat(a).hasNotFailed();
            assertThat(b).hasNotFailed();
            test.accept(a, b);
        }));
    }

    public static class Pool {

        final List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());

        @DistributedLock(key = "'pool:' + #name", permits = 3, waitTime = "30s")
        public void use(String name, List<Interval> into) throws InterruptedException {
            long enter = System.nanoTime();
            Thread.sleep(5); // widen the window a fourth caller would need
            into.add(new Interval(enter, System.nanoTime()));
        }

        @DistributedLock(key = "#name", permits = 1, waitTime = "0s", onFailure = OnFailure.SKIP)
        public Long tryUse(String name, @FencingToken long token) {
            assertThat(LockContext.fencingToken()).isEqualTo(token);
            assertThat(LockContext.keys()).containsExactly(name);
            return token;
        }

        @DistributedLock(key = "#name", permits = 2, waitTime = "100ms")
        public long useTwice(String name, Pool self) {
            return self.useOnce(name); // the same thread again: shares its permit
        }

        @DistributedLock(key = "#name", permits = 2, waitTime = "100ms")
        public long useOnce(String name) {
            return LockContext.fencingToken();
        }
    }

    @Test
    void aPermitsAttributeAdmitsThatManyCallsAtOnceAcrossTwoApplications() throws Exception {
        runTwo((a, b) -> {
            List<Interval> intervals = Collections.synchronizedList(new ArrayList<>());
            List<Pool> services = List.of(a.getBean(Pool.class), b.getBean(Pool.class));
            Concurrently.run(10, 8, thread -> services.get(thread % 2).use("printers", intervals));
            assertThat(intervals).hasSize(80);
            assertThat(Intervals.maxConcurrency(intervals)).isEqualTo(3);
        });
    }

    @Test
    void aCallFindingNoPermitFreeIsSkippedAndACallHoldingOneGetsItsFencingToken() {
        runTwo((a, b) -> {
            Pool service = a.getBean(Pool.class);
            Long first = service.tryUse("scanner", 0);
            assertThat(first).isPositive();
            RedisLockTemplate other = b.getBean(RedisLockTemplate.class);
            try (PermitHandle taken = other.semaphore("scanner", 1).acquire(LockOptions.tryOnce())) {
                assertThat(service.tryUse("scanner", 0)).as("skipped: the only permit is taken").isNull();
            }
            assertThat(service.tryUse("scanner", 0)).isGreaterThan(first);
        });
    }

    @Test
    void aNestedCallOnTheSameSemaphoreSharesItsCallersPermitAndAFullOneThrows() {
        runTwo((a, b) -> {
            Pool service = a.getBean(Pool.class);
            RedisLockTemplate other = b.getBean(RedisLockTemplate.class);
            try (PermitHandle one = other.semaphore("plotter", 2).acquire(LockOptions.tryOnce())) {
                // one permit left: the nested call would wait for itself if it took another
                assertThat(service.useTwice("plotter", service)).isPositive();
                try (PermitHandle two = other.semaphore("plotter", 2).tryAcquire(LockOptions.tryOnce()).orElse(null)) {
                    assertThat(two).as("the nested calls gave their permit back").isNotNull();
                }
            }
            PermitHandle[] both = new PermitHandle[1];
            both[0] = other.semaphore("plotter", 2).acquire(2, LockOptions.tryOnce());
            try {
                assertThatThrownBy(() -> service.useOnce("plotter")).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("'plotter'");
            } finally {
                both[0].release();
            }
        });
    }
}
