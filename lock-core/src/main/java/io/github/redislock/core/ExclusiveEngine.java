package io.github.redislock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The exclusive lock over one {@link LockStore} on a template's {@link EngineContext}: the per-key in-JVM queues
 * ({@link LocalLocks}), whose holdings the context's watchdog renews with the store's calls, the look at a kept
 * turn's end, and the observed acquisitions. {@link RedisLockTemplate} builds one over one Redis beside its other
 * lock types; {@link RedlockTemplate} builds one over a quorum of independent masters, and is nothing more.
 */
final class ExclusiveEngine implements LockEngine {

    final LocalLocks locks = new LocalLocks();
    final ExclusiveLock exclusive;
    /** Looks, at the end of a turn a release kept for the clients it woke, whether one of them took the lock. */
    final WakeLooks turnLooks;
    private final LockActivity activity;

    ExclusiveEngine(EngineContext context, LockStore store) {
        this.activity = context.activity;
        Renewer renewer = new Renewer(LockType.EXCLUSIVE, store::renew, store.renewMany());
        context.watchdog.renewExclusive(locks.all(), renewer);
        // the exclusive and the fair lock of a key are one Redis key: one look at a time at an unused turn's end
        this.turnLooks = new WakeLooks(context.cleanup, store::turnEnded);
        this.exclusive = new ExclusiveLock(store, locks, context, turnLooks, renewer);
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

    /**
     * A release notice (the lock's name: wakes this client's contender for it, and those of the other lock types), or a
     * grant of the lock to this client (release.lua: {@link LockScripts#GRANTED}, the token, when it was made, the name).
     */
    @Override
    public boolean wake(String message) {
        if (!message.startsWith(LockScripts.GRANTED)) {
            locks.wake(message);
            return false;
        }
        int tokenEnd = message.indexOf(LockScripts.GRANTED, 1);
        int timeEnd = tokenEnd < 0 ? -1 : message.indexOf(LockScripts.GRANTED, tokenEnd + 1);
        if (timeEnd < 0) {
            return true; // not a grant this version understands: the lock's waiters look again by themselves
        }
        try {
            exclusive.granted(message.substring(timeEnd + 1), new Grant(Long.parseLong(message, 1, tokenEnd, 10),
                    Long.parseLong(message, tokenEnd + 1, timeEnd, 10)));
        } catch (NumberFormatException e) {
            // likewise
        }
        return true;
    }

    @Override
    public void wakeAll() {
        locks.wakeAll();
    }

    @Override
    public Stream<String> inUse() {
        return locks.keys().map(key -> RedisLockDiagnostics.inUse(LockType.EXCLUSIVE, key));
    }
}
