package io.github.redislock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.LockScripts.ReleaseReply;
import io.github.redislock.core.WaitLoop.Deadline;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;

/**
 * The fair lock type: strict FIFO by arrival in Redis, across threads and JVMs. Unlike the exclusive lock, every
 * waiting thread is its own entry in the key's Redis queue (there is no local queue in front), so the order is
 * the order in which the threads' first requests reached Redis, whichever JVM they run in.
 * <p>
 * A release hands the lock to the head of the queue inside the release script, with a new fencing token, and
 * publishes the grant (owner, token and the server time it was made) to the waiter's client, which wakes exactly that
 * thread; the thread holds the lock from that message if the grant was made after its latest request that missed, by
 * the server's clock (else it asks Redis), and confirms it in the background, which sets its full lease (with replica
 * acknowledgement on, it confirms first). Waiting threads refresh their entry every {@value FairLockScripts#REFRESH_MILLIS}
 * ms: an entry not refreshed for {@value FairLockScripts#ENTRY_TTL_MILLIS} ms (its thread or JVM died) is dropped,
 * and a hand-over not confirmed within {@value FairLockScripts#GRANT_MILLIS} ms expires, so the next waiter's
 * refresh takes the lock: dead waiters cost well under a second together, not a lease each. A slow waiter keeps
 * its place at the head until it confirms. Reentrant per thread (nested acquisitions cost no round trip), leased
 * and renewed by the shared {@link Watchdog}, which watches each holding from acquisition to release.
 */
final class FairLock implements LockEngine {

    private static final Logger log = LoggerFactory.getLogger(FairLock.class);

    private final FairLockScripts scripts;
    private final FairLocks fairLocks = new FairLocks();
    private final EngineContext context;
    private final Watchdog watchdog;
    private final Renewer renewer;
    private final WaitLoop waitLoop;
    private final BackgroundCleanup cleanup;
    private final Duration watchdogLease;
    /** Each thread's current holding of a key, with its hold count: only that thread reads or writes it. */
    private final ConcurrentHashMap<HoldId, Hold> holds = new ConcurrentHashMap<>();
    /** Looks whether clients waiting for the exclusive lock on a key this client's release freed took it. */
    private final WakeLooks exclusiveWaitersLooks;

    /** @param exclusiveWaitersLooks the exclusive lock's looks at a turn's end: the two are one Redis key */
    FairLock(FairLockScripts scripts, EngineContext context, WakeLooks exclusiveWaitersLooks) {
        this.scripts = scripts;
        this.context = context;
        this.watchdog = context.watchdog;
        this.renewer = new Renewer(LockType.FAIR, scripts::renew, scripts.renewMany());
        this.waitLoop = context.waitLoop;
        this.cleanup = context.cleanup;
        this.watchdogLease = context.watchdogLease;
        this.exclusiveWaitersLooks = exclusiveWaitersLooks;
    }

    @Override
    public boolean wake(String message) {
        return fairLocks.wake(message);
    }

    @Override
    public void wakeAll() {
        fairLocks.wakeAll();
    }

    @Override
    public Stream<String> inUse() {
        return fairLocks.waitingKeys().map(key -> RedisLockDiagnostics.inUse(LockType.FAIR, key));
    }

    private record HoldId(String key, Thread thread) {
    }

    private static final class Hold {

        final LocalLock lock;
        int count = 1;

        Hold(LocalLock lock) {
            this.lock = lock;
        }
    }

    /** As {@link ExclusiveLock#tryAcquire}: an interrupt ends the wait with {@link LockNotAcquiredException}. */
    Optional<LockHandle> tryAcquire(String key, Duration wait, Duration lease) {
        try {
            LocalLock lock = lock(key, wait, lease, true);
            return lock == null ? Optional.empty() : Optional.of(LocalLockHandle.fair(lock, this::release));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, wait, e);
        }
    }

    /**
     * Takes the lock for the current thread when its turn comes, waiting up to {@code wait}.
     *
     * @param lease the fixed lease, or {@code null} for the watchdog
     * @param interruptible whether an interrupt ends the wait with {@link InterruptedException}; if not, waiting
     *        goes on and the interrupt flag is restored afterwards
     * @return the holding; {@code null} when the wait ended first (the thread then left the queue)
     */
    LocalLock lock(String key, Duration wait, Duration lease, boolean interruptible) throws InterruptedException {
        HoldId id = new HoldId(key, Thread.currentThread());
        Hold hold = holds.get(id);
        if (hold != null) {
            String invalid = hold.lock.invalidReason();
            if (invalid != null) {
                throw new LockLostException(key, hold.lock.token, invalid);
            }
            hold.count++;
            return hold.lock;
        }
        Deadline deadline = Deadline.startingNow(wait);
        String owner = context.newOwner();
        long leaseMillis = lease != null ? lease.toMillis() : watchdogLease.toMillis();
        LocalLock lock = new LocalLock(key);
        boolean interrupted;
        // the latest request that found the lock not ours: when it was sent, and when it ran by the server's clock (µs);
        // a hand-over message proves it is newer than that miss (else its grant was over by then), and it then ran in
        // Redis after the request was sent
        long[] lastMiss = {0, 0};
        fairLocks.waiting.put(owner, lock);
        try {
            interrupted = waitLoop.await(lock, deadline, interruptible, (sleepMillis, registered, attempt) -> {
                Grant grant = lock.grant;
                if (grant != null && lastMiss[0] != 0 && takeGrant(lock, owner, grant, lastMiss[0], lastMiss[1],
                        leaseMillis, lease == null)) {
                    return new AcquireReply(grant.token(), 0);
                }
                long requestStart = System.nanoTime();
                FairLockScripts.Reply reply = scripts.acquire(key, owner, leaseMillis, sleepMillis > 0, attempt);
                if (reply.acquired()) {
                    lock.held(owner, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart, lease == null);
                } else if (reply.missedAtMicros() > 0) {
                    lastMiss[0] = requestStart;
                    lastMiss[1] = reply.missedAtMicros();
                }
                return reply.asAcquireReply();
            }, (registered, uncertain) -> giveUp(key, owner, registered, uncertain));
        } finally {
            fairLocks.waiting.remove(owner);
        }
        if (lock.owner != null) {
            watchdog.watch(lock, renewer);
            holds.put(id, new Hold(lock));
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return lock.owner != null ? lock : null;
    }

    /**
     * Holds the lock the release script handed to {@code owner}, as its message told, without a round trip, if the
     * grant is newer than the waiter's latest miss by the Redis server's clock: then the grant's short lease
     * ({@value FairLockScripts#GRANT_MILLIS} ms) was set in Redis after that miss ran, and so after
     * {@code grantedAfterNanos} (when it was sent), and it is counted from then. A grant made at or before the miss
     * was over by the time the miss ran (had it been this waiter's then, the request would have found it so): its
     * message came late (this JVM stalled, or its subscription lagged), the next waiter may hold the lock now, and
     * it is never held on. A confirmation in the background gives a grant taken the full lease (and the watchdog,
     * without an explicit lease), or marks it lost if the grant expired first. With the watchdog, the confirmation is
     * sent at most {@value FairLockScripts#CONFIRM_AFTER_MILLIS} ms later (at the latest when half the grant has
     * passed), by a sweep that sends every confirmation due by then, and not at all if the lock was released by then;
     * with a fixed lease, which counts from the acquisition, at once.
     *
     * @param missedAtMicros the server time of the latest miss, in µs
     * @return whether the current thread holds the lock now; if not (replicas must acknowledge grants, the grant is
     *         not newer than the miss, or its lease is too nearly over), it asks Redis as usual
     */
    private boolean takeGrant(LocalLock lock, String owner, Grant grant, long grantedAfterNanos,
            long missedAtMicros, long leaseMillis, boolean renewing) {
        lock.grant = null;
        if (!scripts.grantsByMessage() || grant.grantedAt() <= missedAtMicros
                || !GrantConfirmations.youngEnough(grantedAfterNanos)) {
            return false;
        }
        context.confirmations.hold(lock, owner, grant.token(), grantedAfterNanos, leaseMillis, renewing, scripts::confirm,
                renewer);
        return true;
    }

    /** Leaves the queue; hands the lock on if it was handed to this waiter just as it gave up. */
    private void giveUp(String key, String owner, boolean registered, boolean uncertain) {
        if (uncertain) {
            // a failed request may still queue this waiter or take the lock: give up its attempts first (one landing
            // later then changes nothing), then leave, handing on a lock it took; in the background, so the caller's
            // failure is not delayed by another client timeout
            cleanup.run(key, () -> {
                scripts.abandon(key, owner);
                lookLater(key, scripts.leave(key, owner));
            });
            return;
        }
        if (!registered) {
            return;
        }
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                lookLater(key, scripts.leave(key, owner));
            } catch (RuntimeException e) { // Redis unreachable, or this template closed meanwhile
                log.debug("Could not leave the queue of fair lock '{}'; retrying in the background", key, e);
                cleanup.run(key, () -> scripts.leave(key, owner));
            }
        });
    }

    /**
     * After a release that freed the key and woke some of the clients waiting for the exclusive lock on it, not all:
     * wakes the others a turn's time later if the woken ones (dead, or gone) left the key free.
     */
    private ReleaseReply lookLater(String key, ReleaseReply reply) {
        if (reply.turnKept()) {
            exclusiveWaitersLooks.after(key);
        }
        return reply;
    }

    /** Releases one hold of the current thread on {@code key}. */
    void release(String key) {
        Hold hold = holds.get(new HoldId(key, Thread.currentThread()));
        if (hold == null) {
            throw new IllegalMonitorStateException("Fair lock '" + key + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'");
        }
        release(hold.lock);
    }

    private void release(LocalLock lock) {
        HoldId id = new HoldId(lock.key, Thread.currentThread());
        Hold hold = holds.get(id);
        if (hold == null || hold.lock != lock) {
            throw new IllegalMonitorStateException("Fair lock '" + lock.key + "' is not held by thread '"
                    + Thread.currentThread().getName() + "'; only the thread that acquired it may release it");
        }
        if (--hold.count > 0) {
            return;
        }
        holds.remove(id);
        long token = lock.token;
        String invalid = lock.invalidReason();
        String owner = lock.releasing();
        watchdog.unwatch(lock);
        ReleaseReply[] reply = {ReleaseReply.RELEASED};
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                reply[0] = lookLater(lock.key, scripts.release(lock.key, owner));
            } catch (DataAccessException e) {
                log.warn("Could not release fair lock '{}' in Redis ({}); retrying in the background, and its lease ends "
                        + "it at the latest", lock.key, e.toString());
                cleanup.run(lock.key, () -> scripts.release(lock.key, owner));
            }
        });
        if (invalid != null) {
            throw new LockLostException(lock.key, token, invalid);
        }
        if (!reply[0].wasOwner()) {
            throw new LockLostException(lock.key, token, "Redis no longer had it as this owner's at release");
        }
    }
}
