package io.github.redislock.annotation;

import java.util.Optional;
import java.util.SortedSet;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import io.github.redislock.core.LockOperations;
import io.github.redislock.core.LockOptions;
import io.github.redislock.core.MultiLockHandle;

/**
 * Where the calls of one {@link DistributedLock} method take their locks, resolved once by {@link LockBackends}: the
 * {@link LockOperations} bean its {@code locks} attribute names, with the verbs of its lock type.
 */
final class LockBackend {

    /** Takes the locks of one call. */
    @FunctionalInterface
    interface Acquisition {

        /**
         * Takes every key or none, within the options' wait time.
         *
         * @param throwOnTimeout whether a wait that ends without the locks throws
         *        {@link io.github.redislock.core.LockNotAcquiredException} (else empty)
         */
        Optional<MultiLockHandle> acquire(SortedSet<String> keys, LockOptions options, boolean throwOnTimeout);
    }

    /** The bean name of the backend, as messages give it. */
    final String beanName;
    private final Acquisition acquisition;
    private final Supplier<Executor> asyncExecutor;

    LockBackend(String beanName, Acquisition acquisition, Supplier<Executor> asyncExecutor) {
        this.beanName = beanName;
        this.acquisition = acquisition;
        this.asyncExecutor = asyncExecutor;
    }

    /** The exclusive lock of {@link LockOperations#acquireAll}, which every backend serves. */
    static Acquisition exclusive(LockOperations locks) {
        return (keys, options, throwOnTimeout) -> throwOnTimeout ? Optional.of(locks.acquireAll(keys, options))
                : locks.tryAcquireAll(keys, options);
    }

    Optional<MultiLockHandle> acquire(SortedSet<String> keys, LockOptions options, boolean throwOnTimeout) {
        return acquisition.acquire(keys, options, throwOnTimeout);
    }

    /** The threads that hold the locks of asynchronous methods ({@link LockOperations#asyncExecutor()}). */
    Executor asyncExecutor() {
        return asyncExecutor.get();
    }
}
