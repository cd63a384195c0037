package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.WaitLoop.Deadline;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;

/**
 * The Redis side of {@link ReadWriteLocks}: takes one side of a read/write lock in Redis, waiting on the shared
 * {@link WaitLoop} (a waiting writer enters itself as waiting, so new readers stay out), leaves nothing behind after
 * a failed wait, and gives a holding back. Each acquisition gets an owner id of its own, as the exclusive lock's do,
 * so the clean-up of an earlier attempt never releases a later one.
 */
final class ReadWriteRedis {

    private static final Logger log = LoggerFactory.getLogger(ReadWriteRedis.class);

    private final LockScripts scripts;
    /** Where the threads of this client waiting for a key sleep; woken when a release of the key is published. */
    private final LocalLocks waiting;
    private final WaitLoop waitLoop;
    private final BackgroundCleanup cleanup;
    private final EngineContext context;
    private final Duration watchdogLease;

    ReadWriteRedis(LockScripts scripts, LocalLocks waiting, EngineContext context) {
        this.scripts = scripts;
        this.waiting = waiting;
        this.context = context;
        this.waitLoop = context.waitLoop;
        this.cleanup = context.cleanup;
        this.watchdogLease = context.watchdogLease;
    }

    /**
     * Takes one side for the current thread, with a reader entry (or writer holding) of its own.
     *
     * @param lease the fixed lease, or {@code null} for the watchdog
     * @param downgradingWriter the owner of the write lock the thread holds and reads under, or {@code ""}
     * @param beforeEachAttempt runs before each request to Redis
     * @return the holding; {@code null} on timeout
     */
    @Nullable LocalLock acquire(String key, LockType mode, Duration wait, @Nullable Duration lease, boolean interruptible,
            String downgradingWriter, Runnable beforeEachAttempt) throws InterruptedException {
        Deadline deadline = Deadline.startingNow(wait);
        // a new owner id per acquisition, as the exclusive lock: the clean-up of an earlier attempt never
        // releases a later one
        String owner = context.newOwner();
        LocalLock wakePoint = waiting.retain(key);
        try {
            return await(key, mode, deadline, lease, interruptible, downgradingWriter, owner, wakePoint, beforeEachAttempt);
        } finally {
            waiting.unretain(wakePoint);
        }
    }

    /**
     * Takes a reader entry for a read share of this client, leased by the watchdog, waiting on {@code wakePoint}
     * (which the caller retains).
     *
     * @return the holding; {@code null} on timeout
     */
    @Nullable LocalLock openShare(String key, Deadline deadline, boolean interruptible, LocalLock wakePoint)
            throws InterruptedException {
        String owner = context.newOwner("share");
        return await(key, LockType.READ, deadline, null, interruptible, "", owner, wakePoint, () -> { });
    }

    private @Nullable LocalLock await(String key, LockType mode, Deadline deadline, @Nullable Duration lease,
            boolean interruptible, String downgradingWriter, String owner, LocalLock wakePoint, Runnable beforeEachAttempt)
            throws InterruptedException {
        long leaseMillis = lease != null ? lease.toMillis() : watchdogLease.toMillis();
        LocalLock holding = new LocalLock(key);
        boolean interrupted = waitLoop.await(wakePoint, deadline, interruptible, (sleepMillis, registered, attempt) -> {
            long requestStart = System.nanoTime();
            beforeEachAttempt.run();
            AcquireReply reply = mode == LockType.READ
                    ? scripts.readAcquire(key, owner, leaseMillis, sleepMillis, downgradingWriter, attempt)
                    : scripts.writeAcquire(key, owner, leaseMillis, sleepMillis, attempt);
            if (reply.acquired()) {
                holding.held(owner, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart,
                        lease == null);
            }
            return reply;
        }, (registered, uncertain) -> giveUp(key, mode, owner, registered, uncertain));
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return holding.owner != null ? holding : null;
    }

    /**
     * Leaves nothing behind after a failed wait: a writer's waiting entry (so the readers it held back enter now),
     * and a holding whose grant reply was lost. A client's waiting entry is left to expire: another thread of this
     * client may still wait on it.
     */
    private void giveUp(String key, LockType mode, String owner, boolean registered, boolean uncertain) {
        if (uncertain) {
            cleanup.run(key, () -> {
                scripts.abandon(key, owner); // first: an attempt landing later then changes nothing
                scripts.readWriteRelease(key, owner, mode == LockType.WRITE);
                if (mode == LockType.WRITE) {
                    scripts.leaveAsWriter(key, owner);
                }
            });
            return;
        }
        if (registered && mode == LockType.WRITE) {
            BackgroundCleanup.withoutInterrupt(() -> {
                try {
                    scripts.leaveAsWriter(key, owner);
                } catch (RuntimeException e) {
                    log.debug("Could not withdraw a waiting writer of lock '{}'; its entry expires", key, e);
                    cleanup.run(key, () -> scripts.leaveAsWriter(key, owner));
                }
            });
        }
    }

    /**
     * Gives {@code owner}'s holding of one side back in Redis; when Redis cannot be reached, retries in the
     * background (its lease ends it at the latest).
     *
     * @return whether Redis still had it as {@code owner}'s ({@code true} when it could not tell)
     */
    boolean release(String key, String owner, LockType mode) {
        boolean[] wasOwner = {true};
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                wasOwner[0] = scripts.readWriteRelease(key, owner, mode == LockType.WRITE);
            } catch (DataAccessException e) {
                log.warn("Could not release the {} lock of '{}' in Redis ({}); retrying in the background, and its lease "
                        + "ends it at the latest", mode.name().toLowerCase(), key, e.toString());
                cleanup.run(key, () -> scripts.readWriteRelease(key, owner, mode == LockType.WRITE));
            }
        });
        return wasOwner[0];
    }
}
