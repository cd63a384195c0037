package io.github.redislock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;

import io.github.redislock.annotation.DistributedLock;
import io.github.redislock.annotation.FencingToken;
import io.github.redislock.core.LockType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** A {@code permits} attribute that cannot work stops the application at start-up, saying what to change. */
class DistributedSemaphoreStartupTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                    RedisLockAutoConfiguration.class))
            .withPropertyValues("spring.data.redis.port=1");

    static Stream<Arguments> brokenSemaphores() {
        return Stream.of(
                Arguments.of(NegativePermits.class, "NegativePermits.run()", "permits = -1 must be 1 or more"),
                Arguments.of(ReadSemaphore.class, "ReadSemaphore.run()", "cannot be combined with type = READ"),
                Arguments.of(FairSemaphore.class, "FairSemaphore.run()", "cannot be combined with type = FAIR"),
                Arguments.of(WriteSemaphore.class, "WriteSemaphore.run()", "cannot be combined with type = WRITE"),
                Arguments.of(TwoKeys.class, "TwoKeys.run(String, String)", "takes a single key, but there are 2"),
                Arguments.of(SemaphoreWithoutPermits.class, "SemaphoreWithoutPermits.run()",
                        "type = SEMAPHORE needs permits = N"));
    }

    @ParameterizedTest
    @MethodSource("brokenSemaphores")
    void aSemaphoreThatCannotWorkStopsTheApplication(Class<?> bean, String method, String problem) {
        runner.withBean(bean).run(context -> assertThat(context).getFailure()
                .hasMessageContaining(bean.getName().replace(bean.getSimpleName(), "") + method)
                .hasMessageContaining(problem));
    }

    @Test
    void aSemaphoreWithAFencingTokenParameterStarts() {
        runner.withBean(Fenced.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void aSemaphoreMayNameItsType() {
        runner.withBean(TypedSemaphore.class).run(context -> assertThat(context).hasNotFailed());
    }

    public static class TypedSemaphore {
        @DistributedLock(key = "#name", type = LockType.SEMAPHORE, permits = 2)
        public void run(String name) {
        }
    }

    static class SemaphoreWithoutPermits {
        @DistributedLock(key = "'k'", type = LockType.SEMAPHORE)
        public void run() {
        }
    }

    public static class Fenced {
        @DistributedLock(key = "#name", permits = 4)
        public void run(String name, @FencingToken long token) {
        }
    }

    static class NegativePermits {
        @DistributedLock(key = "'k'", permits = -1)
        public void run() {
        }
    }

    static class ReadSemaphore {
        @DistributedLock(key = "'k'", permits = 2, type = LockType.READ)
        public void run() {
        }
    }

    static class FairSemaphore {
        @DistributedLock(key = "'k'", permits = 2, type = LockType.FAIR)
        public void run() {
        }
    }

    static class WriteSemaphore {
        @DistributedLock(key = "'k'", permits = 2, type = LockType.WRITE)
        public void run() {
        }
    }

    static class TwoKeys {
        @DistributedLock(key = {"#a", "#b"}, permits = 2)
        public void run(String a, String b) {
        }
    }
}
