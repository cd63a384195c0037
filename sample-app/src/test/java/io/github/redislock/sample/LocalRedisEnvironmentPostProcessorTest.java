package io.github.redislock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.mock.env.MockEnvironment;

/** The sample's first run on a laptop without Redis; probes a free port, never the machine's 6379. */
class LocalRedisEnvironmentPostProcessorTest {

    private final LocalRedisEnvironmentPostProcessor postProcessor = new LocalRedisEnvironmentPostProcessor(new DeferredLogs());

    @Test
    void startsARedisWhenNoneIsConfiguredAndNoneAnswers() {
        MockEnvironment environment = new MockEnvironment();
        RedisServerProcess started = postProcessor.startRedisIfNoneAnswers(environment, new SpringApplication(),
                RedisServerProcess.freePort());
        try {
            assertThat(started).isNotNull();
            assertThat(environment.getProperty("spring.data.redis.port", Integer.class)).isEqualTo(started.port());
            assertThat(started.command("PING")).isEqualTo("PONG");
        } finally {
            started.close();
        }
        assertThat(started.isRunning()).isFalse();
    }

    @Test
    void leavesAConfiguredRedisAlone() {
        MockEnvironment environment = new MockEnvironment().withProperty("spring.data.redis.host", "redis.internal");
        assertThat(postProcessor.startRedisIfNoneAnswers(environment, new SpringApplication(), RedisServerProcess.freePort()))
                .isNull();
    }

    @Test
    void aPropertyTurnsItOff() {
        MockEnvironment environment = new MockEnvironment().withProperty("sample.start-redis", "false");
        assertThat(postProcessor.startRedisIfNoneAnswers(environment, new SpringApplication(), RedisServerProcess.freePort()))
                .isNull();
    }

    @Test
    void usesARedisThatAnswers() {
        try (RedisServerProcess running = RedisServerProcess.start()) {
            assertThat(postProcessor.startRedisIfNoneAnswers(new MockEnvironment(), new SpringApplication(), running.port()))
                    .isNull();
        }
    }
}
