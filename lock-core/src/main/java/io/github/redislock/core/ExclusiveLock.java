package io.github.redislock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.LockScripts.ReleaseReply;
import io.github.redislock.core.WaitLoop.Deadline;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;

/**
 * The exclusive, reentrant lock type: threads of this JVM queue for a key in its {@link LocalLock}, so Redis
 * sees one contender per JVM and a nested acquisition by the holder costs no round trip; the thread at the head
 * of the queue takes the Redis lock through the {@link WaitLoop}. A release hands the Redis lock straight to the
 * next queued thread when no other client waits for it, reserving fencing tokens; for a short window after that, a
 * release passes the lock to the next queued thread in memory with the next reserved token, no round trip. Where the
 * lock lives is its {@link LockStore}: one Redis, or a quorum of independent masters (Redlock, which hands nothing
 * over: see {@link LockStore#handsOver()}).
 */
final class ExclusiveLock {

    private static final Logger log = LoggerFactory.getLogger(ExclusiveLock.class);

    /**
     * Fencing tokens a hand-over in Redis reserves for this JVM: the next holder's, and the ones its successors of this
     * JVM take when the lock passes on in memory (see {@link LocalLock#passInMemory()}). Unused ones are skipped.
     */
    static final int RESERVED_TOKENS = 100;
    /**
     * How long after a hand-over in Redis the lock may pass from thread to thread of this JVM in memory: it bounds
     * how long a client that started waiting meanwhile waits before a release goes through Redis and sees it.
     */
    static final long IN_MEMORY_WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /**
     * How long the next thread of this JVM sleeps before it asks Redis, at most, when the release before its turn found
     * other clients waiting and registered this JVM behind them: until then only a release notice would change what
     * Redis tells it (see release.lua).
     */
    static final long SLEEP_AFTER_REGISTERED_RELEASE_MILLIS = 1000;

    private final LockStore scripts;
    private final LocalLocks locks;
    private final WaitLoop waitLoop;
    private final BackgroundCleanup cleanup;
    private final EngineContext context;
    private final Duration watchdogLease;
    /** Looks, at the end of a turn a release kept for the clients it woke, whether one of them took the lock. */
    private final WakeLooks turnLooks;
    /** The watchdog's renewal of this lock type, named when a grant taken from its message is marked lost. */
    private final Renewer renewer;

    ExclusiveLock(LockStore scripts, LocalLocks locks, EngineContext context, WakeLooks turnLooks, Renewer renewer) {
        this.scripts = scripts;
        this.renewer = renewer;
        this.locks = locks;
        this.context = context;
        this.waitLoop = context.waitLoop;
        this.cleanup = context.cleanup;
        this.turnLooks = turnLooks;
        this.watchdogLease = context.watchdogLease;
    }

    /**
     * The template API's acquisition: an interrupt while waiting ends the wait with
     * {@link LockNotAcquiredException} and leaves the thread's interrupt flag set.
     *
     * @param key a validated key
     * @return a handle on the lock, now held by the current thread; empty if another owner kept it
     */
    Optional<LockHandle> tryAcquire(String key, Duration wait, Duration lease) {
        return tryAcquire(key, wait, lease, null);
    }

    /**
     * Like {@link #tryAcquire(String, Duration, Duration)}; with {@code holdAtLeast}, the outermost release before
     * that much time after the acquisition leaves the lock in Redis, set to expire then (see {@link #release(LocalLock, long)}).
     */
    Optional<LockHandle> tryAcquire(String key, Duration wait, Duration lease, Duration holdAtLeast) {
        try {
            LocalLock lock = lock(key, wait, lease, true, holdAtLeast == null);
            if (lock == null) {
                return Optional.empty();
            }
            if (holdAtLeast == null && lease == null) {
                return Optional.of(LocalLockHandle.exclusive(lock, false, this::release));
            }
            // a fixed lease may be extended with a minimum hold later (extend)
            LocalLockHandle handle = holdingAtLeast(lock, lease != null);
            if (holdAtLeast != null) {
                // counted from after the lock was granted, so Redis keeps it at least that long after it granted it
                handle.holdUntil(System.nanoTime() + holdAtLeast.toNanos());
            }
            return Optional.of(handle);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, wait, e);
        }
    }

    /** A handle whose release leaves the lock in Redis until its {@link LocalLockHandle#holdUntilNanos()}, if set. */
    private LocalLockHandle holdingAtLeast(LocalLock lock, boolean fixedLease) {
        LocalLockHandle[] handle = new LocalLockHandle[1];
        handle[0] = LocalLockHandle.exclusive(lock, fixedLease, held -> {
            long holdUntil = handle[0].holdUntilNanos();
            if (release(held, holdUntil)) {
                handle[0].heldInRedisUntil(holdUntil);
            }
        });
        return handle[0];
    }

    /**
     * Gives the holding of {@code handle}, acquired with a fixed lease by the current thread, a fixed lease of
     * {@code lease} from now, and a minimum hold of {@code holdAtLeast} from now ({@code null}: none), replacing
     * both it had (ShedLock's {@code SimpleLock.extend}); see {@link RedisLockTemplate#extend}.
     *
     * @return whether the lock was still held and is extended; when Redis no longer had it, it is marked lost
     */
    boolean extend(LocalLockHandle handle, Duration lease, @Nullable Duration holdAtLeast) {
        LocalLock lock = handle.lease();
        if (!lock.mutex.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("Lock '" + lock.key + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'; only the thread that acquired it may extend it");
        }
        LocalLock.Holding current = lock.holding;
        if (current == null || lock.token != handle.token() || !lock.isValid()) {
            return false;
        }
        if (current.renewing() || !handle.hasFixedLease()) { // a grant held from its message is renewed once confirmed
            throw new IllegalArgumentException("Lock '" + lock.key + "' is renewed by the watchdog; only a lock "
                    + "acquired with a fixed lease (LockOptions.withLease) can be extended");
        }
        long requestStart = System.nanoTime();
        if (!scripts.setLease(lock.key, current.owner(), current.owner(), lease.toMillis())) {
            lock.lose(current, "Redis no longer had it as this owner's when its lease was extended");
            return false;
        }
        handle.holdUntil(holdAtLeast == null ? 0 : requestStart + holdAtLeast.toNanos());
        return lock.leaseSet(current, lease.toNanos(), requestStart);
    }

    /**
     * The acquisition algorithm shared by every entry point.
     *
     * @param wait how long to wait; {@link LockOptions#WAIT_FOREVER} for no bound
     * @param lease the fixed lease, or {@code null} for the watchdog
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if not
     *        (the JUC {@code lock()}), waiting goes on and the interrupt flag is restored afterwards
     * @return the local lock, held by the current thread; {@code null} on timeout
     */
    LocalLock lock(String key, Duration wait, Duration lease, boolean interruptible) throws InterruptedException {
        return lock(key, wait, lease, interruptible, true);
    }

    /**
     * Like {@link #lock(String, Duration, Duration, boolean)}; {@code byGrantMessage} false when the release may leave
     * the lock to expire later ({@code holdAtLeast}), so the thread holds a grant to this client only once Redis has
     * given it its lease, not from the grant's message (see {@link #takeGrant}).
     */
    LocalLock lock(String key, Duration wait, Duration lease, boolean interruptible, boolean byGrantMessage)
            throws InterruptedException {
        Deadline deadline = Deadline.startingNow(wait);
        LocalLock lock = locks.retain(key);
        boolean acquired = false;
        boolean interrupted = false;
        Runnable undo = null;
        try {
            if (lock.mutex.isHeldByCurrentThread()) {
                if (interruptible && !deadline.isTryOnce() && Thread.interrupted()) {
                    throw new InterruptedException(); // as ReentrantLock.lockInterruptibly does for its holder
                }
                String invalid = lock.invalidReason();
                if (invalid != null) {
                    throw new LockLostException(key, lock.token, invalid);
                }
                lock.mutex.lock();
                acquired = true;
                return lock;
            }
            if (deadline.isTryOnce()) {
                if (!lock.mutex.tryLock()) {
                    return null;
                }
            } else if (!interruptible && deadline.isForever()) {
                lock.mutex.lock();
            } else if (!interruptible) {
                throw new IllegalArgumentException("a bounded wait is always interruptible");
            } else if (!lock.mutex.tryLock(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                return null;
            }
            try {
                if (lock.handedOver && adoptHandover(lock, lease)) {
                    acquired = true;
                    return lock;
                }
                interrupted |= acquireInRedis(lock, deadline, lease, interruptible, byGrantMessage);
                acquired = lock.owner != null;
            } finally {
                if (!acquired) {
                    undo = lock.undoAfterGivingUp;
                    lock.undoAfterGivingUp = null;
                    lock.mutex.unlock();
                }
            }
            return acquired ? lock : null;
        } finally {
            if (!acquired) {
                unretain(lock);
                if (undo != null) {
                    cleanup.run(lock.key, undo); // now that this thread no longer counts as a contender of this JVM
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The current thread holds the local mutex; takes the Redis lock. Returns whether an interrupt was swallowed. */
    private boolean acquireInRedis(LocalLock lock, Deadline deadline, Duration lease, boolean interruptible,
            boolean byGrantMessage) throws InterruptedException {
        String owner = context.newOwner();
        long leaseMillis = lease != null ? lease.toMillis() : watchdogLease.toMillis();
        boolean takesGrants = byGrantMessage && lease == null && scripts.grantsByMessage();
        lock.missed(0, 0); // this thread's misses only
        return waitLoop.await(lock, deadline, interruptible, (sleepMillis, registered, attempt) -> {
            Grant grant = lock.grant;
            if (grant != null && takesGrants && lock.lastMissSentNanos != 0
                    && takeGrant(lock, grant, lock.lastMissSentNanos, lock.lastMissAt, leaseMillis)) {
                return new AcquireReply(grant.token(), 0);
            }
            if (sleepMillis > 0 && lock.asleepAfterRelease(
                    TimeUnit.MILLISECONDS.toNanos(SLEEP_AFTER_REGISTERED_RELEASE_MILLIS))) {
                // the release before this thread's turn registered this JVM behind the clients it woke: that counts as
                // this thread's miss, and a grant made after it may be held from its message
                if (lock.registeredAtServer() >= 0) {
                    lock.missed(lock.registeredAtNanos(), lock.registeredAtServer());
                }
                return new AcquireReply(0, SLEEP_AFTER_REGISTERED_RELEASE_MILLIS);
            }
            long requestStart = System.nanoTime();
            // an entry a thread that gave up before this one kept is this thread's now: withdrawn when it takes the lock
            AcquireReply reply = scripts.acquire(lock.key, owner, leaseMillis, sleepMillis,
                    registered || lock.waiterEntryKept.get(), attempt);
            if (reply.acquired()) {
                lock.grant = null; // a grant to this client this request adopted, if its message came first
                lock.waiterEntryKept.set(false);
                lock.held(owner, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart, lease == null);
            } else if (reply.missedAt() >= 0) {
                lock.missed(requestStart, reply.missedAt());
            }
            return reply;
        }, (registered, uncertain) -> giveUp(lock, owner, registered || lock.waiterEntryKept.get(), uncertain));
    }

    /**
     * Holds the lock a release granted to this client, as its message told, without a round trip, if the grant is newer
     * than this thread's latest miss by the Redis server's clock: then the grant's short lease
     * ({@value LockScripts#GRANT_MILLIS} ms) was set in Redis after that miss ran, and so after {@code grantedAfterNanos}
     * (when it was sent), and it is counted from then. A grant made at or before the miss was over by the time the miss
     * ran (had it been this client's then, the request would have adopted it): its message came late (this JVM stalled,
     * or its subscription lagged), another client may hold the lock now, and it is never held on. The holder is renewed
     * by the watchdog: a confirmation in the background ({@link GrantConfirmations}) gives it the watchdog's lease, or
     * marks it lost if the grant expired first. Only with the watchdog and without {@code holdAtLeast}: a release that
     * sets a shorter expiry while a confirmation is on its way could see it lengthened again.
     *
     * @param missedAt the server time of the latest miss, in ms modulo {@link LockScripts#GRANT_CLOCK_MODULUS}
     * @return whether the current thread holds the lock now; if not (the grant is not newer than the miss, or its lease
     *         is too nearly over), it asks Redis as usual, which adopts the grant if it is still this client's
     */
    private boolean takeGrant(LocalLock lock, Grant grant, long grantedAfterNanos, long missedAt, long leaseMillis) {
        lock.grant = null;
        long newer = Math.floorMod(grant.grantedAt() - missedAt, LockScripts.GRANT_CLOCK_MODULUS);
        if (newer == 0 || newer >= LockScripts.GRANT_CLOCK_MODULUS / 2
                || !GrantConfirmations.youngEnough(grantedAfterNanos)) {
            return false;
        }
        lock.waiterEntryKept.set(false); // the grant withdrew this client from the waiters
        context.confirmations.hold(lock, LockScripts.grantOwner(context.clientId, grant.token()), grant.token(),
                grantedAfterNanos, leaseMillis, true, scripts::renew, renewer);
        return true;
    }

    /**
     * A release granted {@code key} to this client (its message reached the subscription's thread): the waiting thread
     * takes the grant (or asks Redis, which adopts it); when no thread of this client waits for the key any more, it is
     * given back, so the next client gets it now rather than when it expires.
     */
    void granted(String key, Grant grant) {
        LocalLock lock = locks.get(key);
        if (lock != null) {
            lock.grant = grant;
            lock.wake();
            if (locks.get(key) == lock) {
                return; // else dropped meanwhile: unretain may have missed the grant
            }
        }
        giveBack(key, grant);
    }

    /**
     * Releases a grant to this client that no thread of it took from its message, which passes it on. No thread holds
     * it as it is: one that asked meanwhile adopted it under its own owner id (then this does nothing).
     */
    private void giveBack(String key, Grant grant) {
        String owner = LockScripts.grantOwner(context.clientId, grant.token());
        cleanup.run(key, () -> watchTurn(key, scripts.release(key, owner)));
    }

    /**
     * Leaves nothing behind after a failed wait: the waiter entry, and a lock whose grant reply was lost.
     *
     * @param uncertain whether an attempt failed: its request may have run in Redis after the client gave up
     */
    private void giveUp(LocalLock lock, String owner, boolean registered, boolean uncertain) {
        if (uncertain) {
            // the failed request may still have taken the lock or registered this client as a waiter, or still do
            // so: give up its attempts (one landing later then changes nothing), then undo both, off the caller's
            // thread, so the caller's failure is not delayed by another client timeout (run once the giving-up
            // thread has left the key's local queue: see lock())
            lock.undoAfterGivingUp = () -> {
                scripts.abandon(lock.key, owner);
                scripts.release(lock.key, owner);
                if (locks.get(lock.key) == null) { // else another thread of this client contends now, registered
                    scripts.leave(lock.key);
                }
            };
            return;
        }
        if (registered) {
            if (lock.mutex.hasQueuedThreads()) {
                // another thread of this JVM waits for the key: it takes this thread's place, keeping the JVM's
                // entry and its arrival (the last thread to stop waiting withdraws it: see unretain)
                lock.waiterEntryKept.set(true);
                return;
            }
            lock.waiterEntryKept.set(false);
            leave(lock.key);
        }
    }

    private void leave(String key) {
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                scripts.leave(key);
            } catch (RuntimeException e) { // Redis unreachable, or this template closed meanwhile
                log.debug("Could not withdraw from the waiters of lock '{}'; Redis TTLs will", key, e);
                cleanup.run(key, () -> scripts.leave(key));
            }
        });
    }

    /** Releases one hold of the current thread on {@code lock}. */
    void release(LocalLock lock) {
        release(lock, 0);
    }

    /**
     * Releases one hold of the current thread on {@code lock}. When it is the outermost and {@code holdUntilNanos}
     * (a {@link System#nanoTime()}, 0 for none) is still a millisecond or more away, the Redis lock is not deleted
     * but set to expire then (no hand-over, no wake-up: nobody can have it before), and this JVM lets go of it.
     *
     * @return whether the Redis lock was left to expire at {@code holdUntilNanos}
     */
    boolean release(LocalLock lock, long holdUntilNanos) {
        if (!lock.mutex.isHeldByCurrentThread()) {
            throw new IllegalMonitorStateException("Lock '" + lock.key + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'; only the thread that acquired it may release it");
        }
        if (lock.mutex.getHoldCount() > 1) {
            lock.mutex.unlock();
            unretain(lock);
            return false;
        }
        if (holdUntilNanos == 0 && lock.mutex.hasQueuedThreads() && lock.passInMemory()) {
            lock.mutex.unlock();
            unretain(lock);
            return false;
        }
        long token = lock.token;
        String invalid = lock.invalidReason();
        String owner = lock.releasing();
        long holdMillis = holdUntilNanos == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(holdUntilNanos - System.nanoTime() + 999_999);
        ReleaseReply[] reply = {ReleaseReply.RELEASED};
        boolean leftToExpire = holdMillis > 0 && invalid == null;
        try {
            if (leftToExpire) {
                BackgroundCleanup.withoutInterrupt(() -> reply[0] = holdUntilExpiry(lock, owner, holdMillis));
            } else {
                BackgroundCleanup.withoutInterrupt(
                        () -> reply[0] = releaseOrHandOver(lock, owner,
                                invalid == null && scripts.handsOver() && lock.mutex.hasQueuedThreads()));
            }
        } finally {
            lock.mutex.unlock();
            unretain(lock);
        }
        if (invalid != null) {
            throw new LockLostException(lock.key, token, invalid);
        }
        if (!reply[0].wasOwner()) {
            throw new LockLostException(lock.key, token, "Redis no longer had it as this owner's at release");
        }
        return leftToExpire;
    }

    /**
     * Releases {@code owner}'s Redis lock, or hands it to the next thread of this JVM when one queues for the key
     * and no other client waits; when others wait, the release registers this JVM behind them, so that thread sleeps
     * until a release notice before it asks ({@link LocalLock#asleepAfterRelease}). A request whose reply was lost is
     * undone in the background: it may have released the lock, handed it to an owner nobody will adopt, or not run at
     * all (its registration is withdrawn as a thread's that gave up is).
     *
     * @return the release script's reply; {@link ReleaseReply#RELEASED} when the reply was lost (the lease bounds
     *         the lock either way)
     */
    private ReleaseReply releaseOrHandOver(LocalLock lock, String owner, boolean handOver) {
        String next = handOver ? context.newOwner("handover") : null;
        long requestStart = System.nanoTime();
        try {
            if (next == null) {
                return watchTurn(lock.key, scripts.release(lock.key, owner));
            }
            long wakeups = lock.wakeups(); // before the release can register this JVM: no later notice is missed
            ReleaseReply reply = watchTurn(lock.key, scripts.releaseOrHandOver(lock.key, owner, next,
                    watchdogLease.toMillis(), RESERVED_TOKENS, SLEEP_AFTER_REGISTERED_RELEASE_MILLIS));
            if (reply.handedOver()) {
                long token = reply.handedOverToken();
                lock.held(next, token, watchdogLease.toNanos(), requestStart, true);
                lock.reserveTokens(token + 1, token + RESERVED_TOKENS - 1, System.nanoTime() + IN_MEMORY_WINDOW_NANOS);
                lock.handedOver = true;
            } else if (reply.registered()) {
                lock.registeredByRelease(wakeups, requestStart, reply.registeredAt());
            }
            return reply;
        } catch (DataAccessException e) {
            if (next != null) {
                lock.waiterEntryKept.set(true); // the lost request may have registered this JVM as waiting
            }
            log.warn("Could not release lock '{}' in Redis ({}); retrying in the background, and its lease ends it at the "
                    + "latest", lock.key, e.toString());
            cleanup.run(lock.key, () -> {
                // in this order whether the lost request ran already, runs later (then it finds owner gone and
                // does nothing) or never
                scripts.release(lock.key, owner);
                if (next != null) {
                    scripts.release(lock.key, next); // it handed the lock over, but nobody will adopt it
                }
            });
            return ReleaseReply.RELEASED;
        }
    }

    /**
     * After a release that kept the lock for the turn of the clients it woke: looks, once the turn has ended, whether
     * one of them took it, and if none did (they died or left, and their entries have not gone stale yet) wakes every
     * client still waiting, which would otherwise sleep until its next look (up to 5 s).
     */
    private ReleaseReply watchTurn(String key, ReleaseReply reply) {
        if (reply.turnKept()) {
            turnLooks.after(key);
        }
        return reply;
    }

    /**
     * Leaves {@code owner}'s Redis lock to expire in {@code holdMillis} instead of deleting it, held by nobody (a
     * renewal still on its way cannot stretch it). A request whose reply was lost is left alone: the lock then expires
     * with the lease it had, which is at least as long.
     */
    private ReleaseReply holdUntilExpiry(LocalLock lock, String owner, long holdMillis) {
        try {
            return scripts.holdUntilExpiry(lock.key, owner, holdMillis) ? ReleaseReply.RELEASED : ReleaseReply.NOT_OWNER;
        } catch (DataAccessException e) {
            log.warn("Could not shorten lock '{}' to its minimum hold of {}ms more ({}); it expires with its lease",
                    lock.key, holdMillis, e.toString());
            return ReleaseReply.RELEASED;
        }
    }

    /**
     * Takes over a lock the previous holder handed to this thread (it holds the mutex now).
     *
     * @return whether this thread holds the Redis lock now; if not, it acquires it the usual way
     */
    private boolean adoptHandover(LocalLock lock, Duration lease) {
        lock.handedOver = false;
        String owner = lock.owner;
        if (owner == null || !lock.isValid()) {
            giveBack(lock); // lost or run out while it waited for its next holder
            return false;
        }
        if (lease == null) {
            return true; // handed over with the watchdog's lease, and renewed since
        }
        long requestStart = System.nanoTime();
        // held under an owner id of this thread's from now on: the watchdog may have sent a renewal of the handed-over
        // holding while this thread was on its way, which must not stretch the fixed lease to the watchdog's
        String adopted = context.newOwner();
        try {
            if (scripts.setLease(lock.key, owner, adopted, lease.toMillis())) {
                lock.held(adopted, lock.token, lease.toNanos(), requestStart, false); // a fixed lease: not renewed
                return true;
            }
        } catch (DataAccessException e) {
            log.debug("Could not set the lease of handed-over lock '{}'; acquiring it afresh", lock.key, e);
            cleanup.run(lock.key, () -> scripts.release(lock.key, adopted)); // the request may have run all the same
        }
        giveBack(lock);
        return false;
    }

    private void unretain(LocalLock lock) {
        if (locks.unretain(lock)) {
            giveBack(lock); // every thread queued for it gave up: nobody will take the lock it was handed
            Grant grant = lock.grant;
            if (grant != null) {
                lock.grant = null;
                giveBack(lock.key, grant); // nor the grant its message told of
            }
        }
        if (lock.waiterEntryKept.get() && locks.get(lock.key) != lock && lock.waiterEntryKept.compareAndSet(true, false)) {
            leave(lock.key); // the threads a giving-up thread kept the JVM's entry for gave up too, before registering
        }
    }

    /** Releases, in Redis, a handed-over lock that no thread will use (lost, run out, or nobody took it). */
    private void giveBack(LocalLock lock) {
        String owner = lock.releasing();
        if (owner == null) {
            return;
        }
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                watchTurn(lock.key, scripts.release(lock.key, owner));
            } catch (DataAccessException e) {
                log.debug("Could not release handed-over lock '{}'; retrying in the background", lock.key, e);
                cleanup.run(lock.key, () -> scripts.release(lock.key, owner));
            }
        });
    }
}
