package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Closing a template must not hang while its release subscription is still being set up on a connection that never
 * completes. Seen in CI: a Spring context stopped its Lettuce factory (shutting down the event loop) while a second
 * client's subscription was connecting; that connection's future never completed, and the template's close(), called
 * as the context went on closing, waited for it forever. Here the Redis is stopped (SIGSTOP): it accepts the
 * connection and answers nothing, so Lettuce's handshake waits for its 60 s command timeout.
 */
class CloseWhileSubscribingTest {

    @Test
    void closeReturnsWhileTheSubscriptionIsStuckConnecting() throws Exception {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            LettuceConnectionFactory factory = new LettuceConnectionFactory(
                    new RedisStandaloneConfiguration(redis.host(), redis.port()));
            factory.afterPropertiesSet();
            factory.start();
            try {
                RedisLockTemplate template = new RedisLockTemplate(new StringRedisTemplate(factory));
                redis.pause();
                assertThat(template.isListening()).isFalse(); // starts the subscription, in the background
                Thread.sleep(300); // its thread is now waiting for Redis's answer to the connection handshake

                long start = System.nanoTime();
                template.close();
                long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(tookMs).as("close() took, in ms").isLessThan(5000); // twice WakeupSubscriber.CLOSE_WAIT_MILLIS, and a second
            } finally {
                redis.resume();
                factory.destroy();
            }
        }
    }
}
