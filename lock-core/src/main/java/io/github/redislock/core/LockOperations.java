package io.github.redislock.core;

import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * Distributed, reentrant, owner-checked, leased and fenced exclusive locks: the one interface of every backend, as
 * {@code RedisOperations} is Spring Data Redis's. {@link RedisLockTemplate} implements it over one Redis (standalone,
 * Sentinel or Cluster) and adds what one Redis can do besides (fair, read/write locks and semaphores);
 * {@link RedlockTemplate} implements it over a quorum of independent masters. Program against this interface, and
 * pick a backend by bean name ({@code @DistributedLock(locks = "...")}).
 * <p>
 * The key-taking verbs are short for the same verb on {@link #lock(String) lock(key)}.
 */
public interface LockOperations extends AutoCloseable {

    /** The exclusive, reentrant lock of {@code key}; cheap, holds nothing in Redis until acquired. */
    RedisLock lock(String key);

    /**
     * Acquires the exclusive lock of {@code key}, waiting up to the options' wait time.
     *
     * @throws LockNotAcquiredException if it is still held by another owner after the wait time, or Redis could not
     *         be reached within it (the Redis exception is the cause)
     * @throws IllegalArgumentException for a null, blank, over-long or control-character key
     */
    default LockHandle acquire(String key, LockOptions options) {
        return lock(key).acquire(options);
    }

    /** Acquires with the default wait time and the watchdog. */
    default LockHandle acquire(String key) {
        return acquire(key, LockOptions.defaults());
    }

    /**
     * Like {@link #acquire}, but empty instead of throwing when another owner still holds the lock after the wait
     * time. Redis failures still throw {@link LockNotAcquiredException}.
     */
    default Optional<LockHandle> tryAcquire(String key, LockOptions options) {
        return lock(key).tryAcquire(options);
    }

    /** Acquires the lock, runs {@code action}, and releases the lock, also when the action throws; see {@link RedisLock#execute}. */
    default <T, E extends Throwable> T execute(String key, LockOptions options, LockCallback<T, E> action) throws E {
        return lock(key).execute(options, action);
    }

    /** Runs asynchronous work under the lock; see {@link RedisLock#executeAsync}. */
    default <T> CompletableFuture<T> executeAsync(String key, LockOptions options,
            Supplier<? extends CompletionStage<T>> action) {
        return lock(key).executeAsync(options, action);
    }

    /**
     * Acquires every key or none: sorted and without duplicates, so two callers naming the same keys in any order
     * never deadlock, all within one wait time (the options'), with the options' lease. When a key cannot be had,
     * those already taken are released before this throws. The handle releases them in reverse order.
     *
     * @throws LockNotAcquiredException naming the key still held by another owner after the wait time, or one
     *         Redis could not be reached for
     * @throws IllegalArgumentException for no keys, or a null, blank, over-long or control-character key
     */
    MultiLockHandle acquireAll(Collection<String> keys, LockOptions options);

    /**
     * Like {@link #acquireAll}, but empty instead of throwing when another owner still holds one of the keys after
     * the wait time (nothing is held then). Redis failures still throw {@link LockNotAcquiredException}.
     */
    Optional<MultiLockHandle> tryAcquireAll(Collection<String> keys, LockOptions options);

    /**
     * The threads that wait for and hold the locks of asynchronous work ({@link RedisLock#executeAsync}): virtual
     * threads on Java 21+, else a bounded pool (see {@link RedisLockConfig.AsyncHolders}).
     */
    Executor asyncExecutor();

    /**
     * Registers a listener told when a held lock is found lost. Listeners run on a thread of their own, one
     * notification after another: a slow one delays other listeners, never a renewal.
     */
    void addLockLostListener(LockLostListener listener);

    /**
     * Registers an observer told of every acquisition through the verbs with {@link LockOptions} (and so
     * {@code @DistributedLock}), release, loss and watchdog renewal: for metrics and tracing. The {@code Lock}
     * methods of {@link RedisLock} are not observed.
     */
    void addObserver(LockObserver observer);

    /** What this client holds and does in this JVM now: held locks, waiters, renewals. */
    RedisLockDiagnostics diagnostics();

    RedisLockConfig config();

    /** This client's random id (128 bits, hex); the Redis owner of a lock is this id plus the thread. */
    String clientId();

    /**
     * Stops the watchdog and the subscriptions. Held locks are not released: they expire with their lease, unless
     * their holder releases them, which still works while the Redis clients run. New acquisitions throw
     * {@link IllegalStateException}.
     */
    @Override
    void close();
}
