package io.github.redislock.core;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.Lock;
import java.util.function.Supplier;

/**
 * One distributed lock, named by its key: what {@link LockOperations#lock(String)},
 * {@link RedisLockTemplate#fairLock(String)} and both sides of {@link RedisLockTemplate#readWriteLock(String)} return.
 * Cheap to create: it holds the key, nothing in Redis.
 * <p>
 * Two ways to use it:
 * <ul>
 * <li>the verbs with {@link LockOptions} ({@link #acquire}, {@link #tryAcquire}, {@link #execute},
 * {@link #executeAsync}): a {@link LockHandle} per acquisition with its fencing token, seen by observers, metrics and
 * diagnostics;</li>
 * <li>the {@link Lock} methods, for code written against {@code java.util.concurrent}: reentrant per thread and
 * watchdog-leased; {@code lock()} waits without bound and keeps waiting when interrupted; {@code tryLock()} tries once
 * (a fair lock's never overtakes a queued waiter); {@code newCondition()} is not supported. The {@code Lock} methods
 * are not observed.</li>
 * </ul>
 * Both share the thread's holding: a thread that holds the lock by one way acquires it again by the other at no cost.
 */
public interface RedisLock extends Lock {

    /** The lock's key as the caller gave it (without the Redis prefix). */
    String key();

    /** What kind of lock this is: {@link LockType#EXCLUSIVE}, {@link LockType#FAIR}, {@link LockType#READ} or {@link LockType#WRITE}. */
    LockType type();

    /**
     * Acquires the lock, waiting up to the options' wait time (none: the template's default).
     *
     * @throws LockNotAcquiredException if another owner still holds it after the wait time, or Redis could not be
     *         reached within it (the Redis exception is the cause)
     */
    LockHandle acquire(LockOptions options);

    /**
     * Like {@link #acquire}, but empty instead of throwing when another owner still holds the lock after the wait
     * time. Redis failures still throw {@link LockNotAcquiredException}.
     */
    Optional<LockHandle> tryAcquire(LockOptions options);

    /**
     * Acquires the lock, runs {@code action}, and releases the lock, also when the action throws. If the lock was
     * lost while the action ran, the release throws {@link LockLostException} (added as suppressed when the action
     * threw too).
     */
    <T, E extends Throwable> T execute(LockOptions options, LockCallback<T, E> action) throws E;

    /**
     * Like {@link #execute}, for asynchronous work: waits for the lock on a holder thread of
     * {@link LockOperations#asyncExecutor()} (not the caller's, so it is not reentrant with the caller's locks), calls
     * {@code action} there once the lock is held, and holds it until the stage it returns completes; then releases.
     *
     * @return completes with the action's result after the release; fails with {@link LockNotAcquiredException},
     *         the action's failure, or {@link LockLostException}. Cancelling it stops the wait, or cancels the action's
     *         stage (when it is a {@code CompletableFuture}) and releases.
     */
    <T> CompletableFuture<T> executeAsync(LockOptions options, Supplier<? extends CompletionStage<T>> action);
}
