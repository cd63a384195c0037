package io.github.redislock.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * The floor of S3 across JVMs: no lock, one token that the threads of several worker JVMs pass round a ring, each
 * hand-over one PUBLISH through Spring Data Redis to the next thread's JVM, received on a subscription set up as our
 * template's (Spring Data Redis's listener container, its listener run on the subscription's thread), which unparks
 * the parked thread. The ring alternates JVMs (thread 0 of JVM 0, of JVM 1, ..., then thread 1 of JVM 0, ...), so every
 * hand-over crosses JVMs, as nearly every one of our lock's does in S3 across JVMs (its script calls row): what that
 * scenario costs on a driver, less the lock's script in Redis and the library's code. Only the token's holder is
 * between {@link Lock#lock()} and {@link Lock#unlock()}, so the critical section's counter stays exact.
 */
final class TokenRelay implements AutoCloseable {

    private final StringRedisTemplate publisher;
    private final RedisMessageListenerContainer subscription;
    private final String channel;
    private final int jvm;
    private final int jvms;
    private final int threads;
    /** Per thread of this JVM: 1 while the token is its to take. */
    private final AtomicIntegerArray token;
    private final AtomicReferenceArray<Thread> waiting;
    /** Per thread of this JVM: 1 once it left the ring ({@link #leave}); the token is then passed on for it. */
    private final AtomicIntegerArray gone;
    /** Passes the token on for threads that left, off the subscription's thread (Lettuce's event loop can't wait on itself). */
    private final ExecutorService forwarding = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "relay-forwarder");
        thread.setDaemon(true);
        return thread;
    });
    /** Whether a hand-over of this JVM's reached a subscriber: the ring had formed by then. */
    private volatile boolean running;

    /** Joins the ring as JVM {@code jvm} of {@code jvms}, with {@code threads} threads; JVM 0's thread 0 starts with the token. */
    TokenRelay(RedisConnectionFactory connections, String key, int jvm, int jvms, int threads) {
        this.publisher = new StringRedisTemplate(connections);
        this.channel = key + ":relay:";
        this.jvm = jvm;
        this.jvms = jvms;
        this.threads = threads;
        this.token = new AtomicIntegerArray(threads);
        this.waiting = new AtomicReferenceArray<>(threads);
        this.gone = new AtomicIntegerArray(threads);
        this.subscription = LockBenchmark.subscribeAsOurs(connections, "relay-subscription-", channel + jvm,
                (message, pattern) -> {
                    int thread = Integer.parseInt(new String(message.getBody(), StandardCharsets.US_ASCII));
                    token.set(thread, 1);
                    forwardIfGone(thread);
                    Thread parked = waiting.get(thread);
                    if (parked != null) {
                        LockSupport.unpark(parked);
                    }
                });
        if (jvm == 0) {
            token.set(0, 1);
        }
    }

    /** The place in the ring of this JVM's thread {@code thread} (0 to threads - 1). */
    Lock lock(int thread) {
        return new Lock() {
            @Override
            public void lock() {
                waiting.set(thread, Thread.currentThread());
                while (token.get(thread) == 0) {
                    LockSupport.park(this);
                }
                token.set(thread, 0);
            }

            @Override
            public void unlock() {
                pass(thread);
            }

            @Override
            public void lockInterruptibly() {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean tryLock() {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean tryLock(long time, TimeUnit unit) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Condition newCondition() {
                throw new UnsupportedOperationException();
            }
        };
    }

    /**
     * Hands the token to the next place of the ring. Until every JVM of the ring subscribed, the first hand-over is sent
     * again until one received it; after that a place whose JVM has ended (its window over) is skipped.
     */
    private void pass(int thread) {
        int places = jvms * threads;
        int from = thread * jvms + jvm;
        for (int step = 1; step <= places; step++) {
            int next = (from + step) % places;
            if (publisher.convertAndSend(channel + (next % jvms), Integer.toString(next / jvms)) > 0) {
                running = true;
                return;
            }
            if (!running) {
                step--;
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            }
        }
    }

    /**
     * Thread {@code thread} of this JVM leaves the ring (its window is over): from now on the token is passed on for it,
     * so the other threads, in this JVM and in JVMs whose window ends a little later, still get their turns.
     */
    void leave(int thread) {
        gone.set(thread, 1);
        forwardIfGone(thread);
    }

    private void forwardIfGone(int thread) {
        if (gone.get(thread) == 1 && token.compareAndSet(thread, 1, 0)) {
            forwarding.execute(() -> pass(thread));
        }
    }

    /**
     * Leaves the ring without taking the token with it: unsubscribes (hand-overs then skip this JVM's places), lets
     * the hand-overs under way finish, and passes on a token that arrived meanwhile.
     */
    @Override
    public void close() throws InterruptedException {
        subscription.stop(); // no message arrives after this
        forwarding.shutdown();
        forwarding.awaitTermination(10, TimeUnit.SECONDS);
        for (int thread = 0; thread < threads; thread++) {
            if (token.compareAndSet(thread, 1, 0)) {
                pass(thread);
            }
        }
        LockBenchmark.unsubscribe(subscription);
    }
}
