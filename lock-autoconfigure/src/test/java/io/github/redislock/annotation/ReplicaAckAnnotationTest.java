package io.github.redislock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.redislock.autoconfigure.RedisLockAutoConfiguration;
import io.github.redislock.core.LockNotAcquiredException;
import io.github.redislock.core.ReplicaAckException;
import io.github.redislock.test.RedisSentinelProcesses;
import io.github.redislock.test.WithRedisSentinel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * (A generous timeout: on a loaded machine a live replica's acknowledgement can take longer than the 100ms default.)
 * <p>
 * {@code redis-lock.replica-ack} through {@code @DistributedLock} in a Spring Boot application that reaches Redis
 * through its sentinels, with either driver: the method runs while the replica acknowledges, and does not run (the
 * caller gets the cause) while the replica is paused.
 */
@ParameterizedClass(name = "{0}")
@ValueSource(strings = {"jedis", "lettuce"})
@WithRedisSentinel
class ReplicaAckAnnotationTest {

    static RedisSentinelProcesses sentinel;

    @Parameter
    String clientType;

    static class Payments {

        int runs;

        @DistributedLock(key = "'payment:' + #id", waitTime = "0s")
        public long pay(long id) {
            runs++;
            return LockContext.fencingToken("payment:" + id);
        }

        @DistributedLock(key = "'refund:' + #id", waitTime = "0s", onFailure = OnFailure.SKIP)
        public Long refund(long id) {
            runs++;
            return LockContext.fencingToken("refund:" + id);
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
                        RedisLockAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.client-type=" + clientType,
                        "spring.data.redis.sentinel.master=" + RedisSentinelProcesses.MASTER_NAME,
                        "spring.data.redis.sentinel.nodes=" + String.join(",", sentinel.sentinelNodes()),
                        "redis-lock.replica-ack.replicas=1", "redis-lock.replica-ack.timeout=1s")
                .withBean(Payments.class);
    }

    @Test
    void theMethodRunsUnderALockTheReplicaAcknowledged() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Payments.class).pay(1)).isPositive();
        });
    }

    @Test
    void withThePausedReplicaTheMethodDoesNotRunAndTheCallerIsToldWhy() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            Payments payments = context.getBean(Payments.class);
            payments.pay(2); // connected and scripts loaded before the pause
            int runsBefore = payments.runs;
            sentinel.replica().pause();
            try {
                assertThatThrownBy(() -> payments.pay(2)).isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("payment:2").hasMessageContaining("acknowledged by 0 of 1 replica within 1s")
                        .hasCauseInstanceOf(ReplicaAckException.class);
                assertThatThrownBy(() -> payments.refund(2)).as("SKIP is for a lock held by another owner, not for "
                        + "a Redis failure").isInstanceOf(LockNotAcquiredException.class)
                        .hasMessageContaining("acknowledged by 0 of 1");
                assertThat(payments.runs).isEqualTo(runsBefore);
                assertThat(sentinel.master().command("EXISTS", "redis-lock:{payment:2}")).isEqualTo("0");
            } finally {
                sentinel.replica().resume();
                sentinel.awaitReplicaInSync();
            }
            assertThat(payments.pay(2)).isPositive();
        });
    }
}
