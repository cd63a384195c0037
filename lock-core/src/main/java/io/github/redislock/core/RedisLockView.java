package io.github.redislock.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

/**
 * The {@link RedisLock} contract over one lock type's acquisition, written once so that the lock objects the
 * templates hand out ({@link RedisReentrantLock}, {@link RedisFairLock} and the two sides of
 * {@link ReadWriteLockView}) cannot drift apart. The verbs with options go through the type's observed
 * acquisition ({@link Acquirer}); for what JUC callers rely on: {@code lock()} waits without bound and keeps waiting when interrupted
 * (the interrupt flag is restored afterwards), {@code tryLock()} tries once without waiting, the interruptible
 * forms throw {@link InterruptedException} when the thread is interrupted on entry, and {@code newCondition()} is
 * unsupported (a condition would need a wait set shared across JVMs). A view supplies only how its lock type
 * acquires and releases.
 */
abstract class RedisLockView implements RedisLock {

    /** How a template acquires one lock type with options, observed; empty when another owner kept it past {@code wait}. */
    @FunctionalInterface
    interface Acquirer {
        Optional<LockHandle> tryAcquire(String key, Duration wait, LockOptions options);
    }

    /** What every lock object of one template shares: its observed acquisition per type, default wait, async holders. */
    record Verbs(Acquirer acquirer, Duration defaultWaitTime, Executor asyncExecutor) {
    }

    private final String key;
    private final LockType type;
    private final Verbs verbs;

    RedisLockView(String key, LockType type, Verbs verbs) {
        this.key = key;
        this.type = type;
        this.verbs = verbs;
    }

    @Override
    public final String key() {
        return key;
    }

    @Override
    public final LockType type() {
        return type;
    }

    @Override
    public final LockHandle acquire(LockOptions options) {
        Duration wait = waitTime(options);
        return verbs.acquirer().tryAcquire(key, wait, options).orElseThrow(() -> new LockNotAcquiredException(key, wait));
    }

    @Override
    public final Optional<LockHandle> tryAcquire(LockOptions options) {
        return verbs.acquirer().tryAcquire(key, waitTime(options), options);
    }

    @Override
    public final <T, E extends Throwable> T execute(LockOptions options, LockCallback<T, E> action) throws E {
        Objects.requireNonNull(action, "action");
        return RedisLockTemplate.runAndRelease(acquire(options), action);
    }

    @Override
    public final <T> CompletableFuture<T> executeAsync(LockOptions options, Supplier<? extends CompletionStage<T>> action) {
        Objects.requireNonNull(action, "action");
        Duration wait = waitTime(options);
        return AsyncHold.executeAsync(verbs.asyncExecutor(), () -> verbs.acquirer().tryAcquire(key, wait, options)
                .orElseThrow(() -> new LockNotAcquiredException(key, wait)), action);
    }

    private Duration waitTime(LockOptions options) {
        Objects.requireNonNull(options, "options");
        return options.waitTime() != null ? options.waitTime() : verbs.defaultWaitTime();
    }

    /**
     * Takes the lock for the current thread.
     *
     * @param wait {@link LockOptions#WAIT_FOREVER}, {@link Duration#ZERO} to try once, or how long to wait
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if not, waiting
     *        goes on and the interrupt flag is restored afterwards
     * @return whether the current thread holds the lock now
     */
    abstract boolean acquire(Duration wait, boolean interruptible) throws InterruptedException;

    /**
     * Releases one hold of the current thread.
     *
     * @throws IllegalMonitorStateException when the current thread does not hold the lock
     */
    abstract void release();

    @Override
    public final void lock() {
        try {
            acquire(LockOptions.WAIT_FOREVER, false);
        } catch (InterruptedException e) {
            throw new IllegalStateException("unreachable: lock() does not throw on interrupt", e);
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        acquire(LockOptions.WAIT_FOREVER, true);
    }

    @Override
    public final boolean tryLock() {
        try {
            return acquire(Duration.ZERO, false);
        } catch (InterruptedException e) {
            throw new IllegalStateException("unreachable: tryLock() does not wait", e);
        }
    }

    @Override
    public final boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return acquire(Duration.ofNanos(Math.max(0, unit.toNanos(time))), true);
    }

    @Override
    public final void unlock() {
        release();
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + key + "]";
    }

    @Override
    public final Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
    }
}
