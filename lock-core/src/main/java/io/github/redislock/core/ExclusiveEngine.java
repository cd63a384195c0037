package io.github.redislock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;


/**
 * The exclusive lock over one {@link LockStore}, with everything it runs on: the per-key in-JVM queues
 * ({@link LocalLocks}), the {@link Watchdog} that renews and finds lost holdings (batched, bounded, per node), the
 * background clean-up, the look at a kept turn's end, and the {@link LockActivity} observers and diagnostics read.
 * {@link RedisLockTemplate} builds one over one Redis and adds the other lock types on its watchdog;
 * {@link RedlockTemplate} builds one over a quorum of independent masters, and is nothing more.
 */
final class ExclusiveEngine {

    final LocalLocks locks = new LocalLocks();
    final LockActivity activity = new LockActivity();
    final Watchdog watchdog;
    final BackgroundCleanup cleanup;
    /** Looks, at the end of a turn a release kept for the clients it woke, whether one of them took the lock. */
    final WakeLooks turnLooks;
    final ExclusiveLock exclusive;

    /**
     * @param waitLoop how a waiting thread sleeps until a release is published to this client
     * @param closed whether the template was closed (background clean-up then stops retrying)
     */
    ExclusiveEngine(LockStore store, WaitLoop waitLoop, String clientId, Duration watchdogLease, BooleanSupplier closed) {
        this.watchdog = new Watchdog(watchdogLease, locks.all(), new Renewer(LockType.EXCLUSIVE, store::renew,
                store.renewMany()));
        this.cleanup = new BackgroundCleanup(watchdog, watchdogLease, closed);
        this.turnLooks = new WakeLooks(cleanup, store::turnEnded);
        this.exclusive = new ExclusiveLock(store, locks, waitLoop, cleanup, turnLooks, clientId, watchdogLease);
        watchdog.setEvents(activity);
    }

    /** An observed acquisition of the exclusive lock through the API ({@link LockOptions}' name and {@code holdAtLeast}). */
    Optional<LockHandle> tryAcquire(String key, Duration wait, LockOptions options) {
        return activity.acquire(options.name(), key, LockType.EXCLUSIVE,
                () -> exclusive.tryAcquire(key, wait, options.leaseTime(), options.holdAtLeast()));
    }

    /** {@code acquireAll}'s acquisition of each key, observed like {@link #tryAcquire}. */
    MultiLock.Acquisition acquireAll(LockOptions options) {
        return (key, left, lease) -> activity.acquire(options.name(), key, LockType.EXCLUSIVE,
                () -> exclusive.tryAcquire(key, left, lease, options.holdAtLeast()));
    }

    /** The exclusive lock object of a validated key. */
    RedisLock lock(String key, RedisLockView.Verbs verbs) {
        return new RedisReentrantLock(exclusive, locks, key, verbs);
    }
}
