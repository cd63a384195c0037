package io.github.redislock.core;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.core.task.SyncTaskExecutor;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.util.backoff.FixedBackOff;

/**
 * This client's one subscription: the channel on which releases are announced to it. Releases
 * publish only to clients registered as waiting for that lock, so an idle client receives nothing.
 * Taken at the first wait and kept until the template closes; if it is not listening, waiters fall
 * back to short re-checks.
 * <p>
 * It is never stopped while the template lives: stopping a subscription hands its connection back to
 * the client's pool (Jedis) while the subscription thread may still read from it, and the replies of
 * the next commands sent on it then cross. Keeping it costs one connection per client.
 */
final class WakeupSubscriber implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WakeupSubscriber.class);

    private final RedisMessageListenerContainer container = new RedisMessageListenerContainer();
    private volatile boolean started;
    private final ReentrantLock startLock = new ReentrantLock();

    /**
     * @param onRelease told the lock name of each release published to this client
     * @param onResubscribed told when the subscription is back after a connection loss: releases (and
     *        waiter registrations, if Redis restarted) may have been lost meanwhile
     */
    WakeupSubscriber(RedisConnectionFactory connectionFactory, String channel, Consumer<String> onRelease,
            Runnable onResubscribed) {
        SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor("redis-lock-wakeup-");
        executor.setDaemon(true);
        container.setConnectionFactory(connectionFactory);
        // the listener only wakes a thread: run it on the subscription thread, not on a new thread per message
        container.setTaskExecutor(new SyncTaskExecutor());
        container.setSubscriptionExecutor(executor);
        container.setRecoveryBackoff(new FixedBackOff(500, FixedBackOff.UNLIMITED_ATTEMPTS));
        Listener listener = new Listener(onRelease, onResubscribed);
        container.addMessageListener(listener, new ChannelTopic(channel));
        container.afterPropertiesSet();
    }

    /** Whether the subscription is up or being set up (for diagnostics and tests). */
    boolean isSubscribed() {
        return started;
    }

    /** Whether release messages reach this client now. Subscribes on the first call. */
    boolean isListening() {
        startIfNeeded();
        return container.isListening();
    }

    /**
     * Subscribes, unless that was done before.
     *
     * @return whether it subscribed now: releases published before this moment did not reach this client
     */
    boolean startIfNeeded() {
        return !started && start();
    }

    /** Not synchronized: a virtual thread blocked in the subscribe call would pin its carrier on Java 21-23. */
    private boolean start() {
        startLock.lock();
        try {
            if (started) {
                return false;
            }
            started = true;
            try {
                container.start(); // returns once the channel is subscribed
            } catch (RuntimeException e) {
                log.warn("Could not subscribe to lock release notices yet ({}); waiters re-check until it recovers", e.toString());
            }
            return true;
        } finally {
            startLock.unlock();
        }
    }

    private static final class Listener implements MessageListener, SubscriptionListener {

        private final Consumer<String> onRelease;
        private final Runnable onResubscribed;
        private boolean subscribedBefore;

        Listener(Consumer<String> onRelease, Runnable onResubscribed) {
            this.onRelease = onRelease;
            this.onResubscribed = onResubscribed;
        }

        @Override
        public void onMessage(Message message, byte[] pattern) {
            onRelease.accept(new String(message.getBody(), StandardCharsets.UTF_8));
        }

        @Override
        public synchronized void onChannelSubscribed(byte[] channel, long count) {
            if (subscribedBefore) {
                log.info("Lock release subscription recovered; waiting threads re-check their locks");
                onResubscribed.run();
            }
            subscribedBefore = true;
        }
    }

    @Override
    public void close() {
        try {
            container.stop();
            container.destroy();
        } catch (Exception e) {
            log.debug("closing the release subscription failed", e);
        }
    }
}
