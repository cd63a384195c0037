package io.github.redislock.core;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.core.task.SyncTaskExecutor;
import org.springframework.dao.PermissionDeniedDataAccessException;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.util.ClassUtils;
import org.springframework.util.backoff.FixedBackOff;

/**
 * This client's one subscription: the channel on which releases are announced to it. Releases
 * publish only to clients registered as waiting for that lock, so an idle client receives nothing.
 * Taken, in the background, at the first wait and kept until the template closes; while it is not
 * listening, waiters fall back to short re-checks.
 * <p>
 * It is never stopped while the template lives: stopping a subscription hands its connection back to
 * the client's pool (Jedis) while the subscription thread may still read from it, and the replies of
 * the next commands sent on it then cross. Keeping it costs one connection per client.
 */
final class WakeupSubscriber implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WakeupSubscriber.class);
    private static final boolean JEDIS_PRESENT = ClassUtils.isPresent("redis.clients.jedis.Jedis",
            WakeupSubscriber.class.getClassLoader());

    private final RedisMessageListenerContainer container = new RedisMessageListenerContainer();
    private final SimpleAsyncTaskExecutor subscribing = new SimpleAsyncTaskExecutor("redis-lock-subscribe-");
    /**
     * How long {@link #close()} waits for a subscription being set up before it interrupts the thread setting it up,
     * and as long again after that: a connection that never completes (a driver whose event loop was shut down first,
     * a Redis that accepts connections and answers nothing) must not hang the application's shutdown.
     */
    static final long CLOSE_WAIT_MILLIS = 2000;
    /** Held while the container starts or stops, so that closing waits (a while) for a subscription being set up. */
    private final ReentrantLock lifecycle = new ReentrantLock();
    /** The thread setting the subscription up, while it does. */
    private volatile Thread settingUp;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private volatile boolean started;
    private volatile boolean closed;
    /** Whether Redis has confirmed the subscription once: only then are waiters told of releases. */
    private volatile boolean confirmed;
    private final String channel;
    /** Why Redis refused the subscription to this client's user, for good; {@code null} unless it did. */
    private volatile PermissionDeniedDataAccessException refusal;

    /**
     * @param onRelease told the lock name of each release published to this client
     * @param onResubscribed told when the subscription is up, first or again after a connection loss: releases
     *        (and waiter registrations, if Redis restarted) may have been missed before
     */
    WakeupSubscriber(RedisConnectionFactory connectionFactory, String channel, Consumer<String> onRelease,
            Runnable onResubscribed) {
        this.channel = channel;
        SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor("redis-lock-wakeup-");
        executor.setDaemon(true);
        subscribing.setDaemon(true);
        container.setConnectionFactory(JEDIS_PRESENT ? JedisSubscriptions.discardingFailed(connectionFactory) : connectionFactory);
        // the listener only wakes a thread: run it on the subscription thread, not on a new thread per message
        container.setTaskExecutor(new SyncTaskExecutor());
        container.setSubscriptionExecutor(executor);
        container.setRecoveryBackoff(new FixedBackOff(500, FixedBackOff.UNLIMITED_ATTEMPTS));
        Listener listener = new Listener(onRelease, () -> {
            confirmed = true; // before the wake-up: the woken waiters then sleep on the subscription
            onResubscribed.run();
        });
        container.addMessageListener(listener, new ChannelTopic(channel));
        container.afterPropertiesSet();
    }

    /**
     * Why Redis refused this client's subscription to its user (a missing channel or command permission), or
     * {@code null}. Such a refusal is for good: Redis would refuse the release notices too.
     */
    PermissionDeniedDataAccessException refusal() {
        return refusal;
    }

    /** Whether the subscription is up or being set up (for diagnostics and tests). */
    boolean isSubscribed() {
        return started;
    }

    /** Whether release messages reach this client now. Subscribes on the first call. */
    boolean isListening() {
        startIfNeeded();
        return confirmed && container.isListening();
    }

    /**
     * Starts subscribing, in the background, unless that was done before. The caller does not wait for it:
     * subscribing can take a second (Lettuce on a Cluster or behind Sentinel, for its first connection), longer
     * than a short wait time, and longer than a fair lock's queue entry lives without a refresh. Until the
     * subscription is up, {@link #isListening()} is false and waiters re-check often; once it is up, every waiting
     * thread is woken to look again, as a release published before it was missed.
     */
    void startIfNeeded() {
        if (!started) {
            start();
        }
    }

    private synchronized void start() {
        if (started || closed) {
            return;
        }
        started = true;
        subscribing.execute(() -> {
            lifecycle.lock();
            try {
                if (closed) {
                    return;
                }
                settingUp = Thread.currentThread();
                container.start(); // returns once the channel is subscribed
            } catch (RuntimeException e) {
                PermissionDeniedDataAccessException denied = AclDenials.forSubscription(e, channel);
                if (denied != null) {
                    refusal = denied;
                    log.error("{}; acquisitions that would wait fail until the application restarts with the "
                            + "permission", denied.getMessage());
                } else if (!closed) {
                    log.warn("Could not subscribe to lock release notices yet ({}); waiters re-check until it recovers",
                            e.toString());
                }
            } finally {
                settingUp = null;
                Thread.interrupted(); // an interrupt from close() is for the set-up only
                try {
                    if (closed) { // closed meanwhile: stopped here, under the lock, so a close() waiting for it returns
                        stop();   // only once the subscription is stopped (and if close() gave up waiting, later)
                    }
                } finally {
                    lifecycle.unlock();
                }
            }
        });
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
            }
            // releases published before this moment did not reach this client: its waiters look again now
            onResubscribed.run();
            subscribedBefore = true;
        }
    }

    /**
     * Stops the subscription. Waits for one being set up for {@link #CLOSE_WAIT_MILLIS}, then interrupts it and waits
     * as long again; if it still has not ended, returns, and the subscription stops once its set-up ends.
     */
    @Override
    public void close() {
        closed = true;
        boolean locked = false;
        boolean interrupted = false;
        try {
            locked = lifecycle.tryLock(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            if (!locked) {
                Thread stuck = settingUp;
                if (stuck != null) {
                    stuck.interrupt();
                }
                locked = lifecycle.tryLock(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        try {
            if (locked) {
                stop();
            } else {
                log.warn("The lock release subscription was still being set up {} ms after the template began to close; "
                        + "it stops once that ends", 2 * CLOSE_WAIT_MILLIS);
            }
        } finally {
            if (locked) {
                lifecycle.unlock();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void stop() {
        if (stopped.compareAndSet(false, true)) {
            try {
                container.stop();
                container.destroy();
            } catch (Exception e) {
                log.debug("closing the release subscription failed", e);
            }
        }
    }
}
