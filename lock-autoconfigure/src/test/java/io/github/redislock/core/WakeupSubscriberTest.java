package io.github.redislock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.redislock.test.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The client's one release subscription, against a real redis-server. */
class WakeupSubscriberTest {

    static RedisServerProcess server;
    static RedisClients clients;

    @BeforeAll
    static void startRedis() {
        server = RedisServerProcess.start();
        clients = new RedisClients(server);
    }

    @AfterAll
    static void stopRedis() {
        clients.close();
        server.close();
    }

    @Test
    void aThreadThatStartsWaitingWhileTheIdleSubscriptionStopsIsStillWoken() throws Exception {
        StringRedisTemplate redis = clients.redisTemplate();
        CountDownLatch released = new CountDownLatch(1);
        CountDownLatch lookAgain = new CountDownLatch(1);
        String channel = "test:wake:idle-race";
        try (WakeupSubscriber subscriber = new WakeupSubscriber(redis.getConnectionFactory(), channel,
                key -> released.countDown(), lookAgain::countDown, Duration.ZERO)) {
            subscriber.waiterArrives();
            assertThat(subscriber.isListening()).isTrue();
            subscriber.waiterLeaves();
            boolean[] toldToLookAgain = {false};
            // a thread starts waiting after the idle check passed, and finds the subscription still up
            subscriber.idleCheckPassed = () -> {
                Thread waiter = new Thread(() -> {
                    subscriber.waiterArrives();
                    toldToLookAgain[0] = subscriber.startIfNeeded();
                });
                waiter.start();
                try {
                    waiter.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            };
            subscriber.unsubscribeIfIdle();
            subscriber.idleCheckPassed = () -> { };

            assertThat(toldToLookAgain[0]).isFalse(); // it went to sleep trusting the subscription
            assertThat(subscriber.isSubscribed()).as("still subscribed for the waiting thread").isTrue();
            assertThat(lookAgain.await(1, TimeUnit.SECONDS)).as("waiters told to look again").isTrue();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (released.getCount() > 0 && System.nanoTime() < end) {
                redis.convertAndSend(channel, "some-lock");
                released.await(50, TimeUnit.MILLISECONDS);
            }
            assertThat(released.getCount()).as("a release published now reaches the waiting thread").isZero();
        }
    }
}
