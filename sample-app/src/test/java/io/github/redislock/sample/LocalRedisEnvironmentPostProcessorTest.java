package io.github.redislock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.mock.env.MockEnvironment;

/** The sample's first run on a laptop without Redis; probes a free port, never the machine's 6379. */
class LocalRedisEnvironmentPostProcessorTest {

    private final LocalRedisEnvironmentPostProcessor postProcessor = new LocalRedisEnvironmentPostProcessor(new DeferredLogs());

    @TempDir
    Path tmp;

    Path portFile;

    @BeforeEach
    void portFile() {
        portFile = tmp.resolve("redis.port");
    }

    @Test
    void startsARedisWhenNoneIsConfiguredAndNoneAnswers() {
        MockEnvironment environment = new MockEnvironment();
        RedisServerProcess started = postProcessor.startRedisIfNoneAnswers(environment, new SpringApplication(),
                RedisServerProcess.freePort(), portFile);
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
    void aSecondInstanceUsesTheRedisTheFirstStarted() {
        int unanswered = RedisServerProcess.freePort();
        RedisServerProcess first = postProcessor.startRedisIfNoneAnswers(new MockEnvironment(), new SpringApplication(),
                unanswered, portFile);
        try {
            MockEnvironment second = new MockEnvironment();
            assertThat(postProcessor.startRedisIfNoneAnswers(second, new SpringApplication(), unanswered, portFile)).isNull();
            assertThat(second.getProperty("spring.data.redis.port", Integer.class)).isEqualTo(first.port());
        } finally {
            first.close();
        }
    }

    @Test
    void aStalePortFileIsIgnored() throws Exception {
        Files.writeString(portFile, Integer.toString(RedisServerProcess.freePort()));
        RedisServerProcess started = postProcessor.startRedisIfNoneAnswers(new MockEnvironment(), new SpringApplication(),
                RedisServerProcess.freePort(), portFile);
        try {
            assertThat(started).isNotNull();
            assertThat(Files.readString(portFile)).isEqualTo(Integer.toString(started.port()));
        } finally {
            started.close();
        }
    }

    @Test
    void leavesAConfiguredRedisAlone() {
        MockEnvironment environment = new MockEnvironment().withProperty("spring.data.redis.host", "redis.internal");
        assertThat(postProcessor.startRedisIfNoneAnswers(environment, new SpringApplication(), RedisServerProcess.freePort(), portFile))
                .isNull();
    }

    @Test
    void aPropertyTurnsItOff() {
        MockEnvironment environment = new MockEnvironment().withProperty("sample.start-redis", "false");
        assertThat(postProcessor.startRedisIfNoneAnswers(environment, new SpringApplication(), RedisServerProcess.freePort(), portFile))
                .isNull();
    }

    @Test
    void usesARedisThatAnswers() {
        try (RedisServerProcess running = RedisServerProcess.start()) {
            assertThat(postProcessor.startRedisIfNoneAnswers(new MockEnvironment(), new SpringApplication(), running.port(), portFile))
                    .isNull();
        }
    }
}
