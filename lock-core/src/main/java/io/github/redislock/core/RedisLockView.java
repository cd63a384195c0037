package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * The {@link Lock} contract over one lock type's acquisition, written once so that the views the template hands
 * out ({@link RedisReentrantLock}, {@link RedisFairLock} and the two sides of {@link RedisReadWriteLock}) cannot
 * drift apart on what JUC callers rely on: {@code lock()} waits without bound and keeps waiting when interrupted
 * (the interrupt flag is restored afterwards), {@code tryLock()} tries once without waiting, the interruptible
 * forms throw {@link InterruptedException} when the thread is interrupted on entry, and {@code newCondition()} is
 * unsupported (a condition would need a wait set shared across JVMs). A view supplies only how its lock type
 * acquires and releases.
 */
abstract class RedisLockView implements Lock {

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
    public final Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
    }
}
