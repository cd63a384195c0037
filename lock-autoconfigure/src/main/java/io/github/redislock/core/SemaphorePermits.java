package io.github.redislock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.RedisLockDiagnostics.Kind;
import io.github.redislock.core.WaitLoop.Deadline;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;

/**
 * The semaphore type: every thread asks Redis for its own permits (unlike the exclusive lock, several threads of
 * one JVM may hold permits at once), waiting on the shared {@link WaitLoop}, with one holder entry and lease per
 * acquisition, so the permits of a holder that crashed come back when its lease ends.
 * <p>
 * Each acquisition's lease is a {@link LocalLock} that is never put in {@link LocalLocks}: it records the holding
 * (owner, token, lease, validity) the way the exclusive lock's does, and the {@link Watchdog} watches it from
 * acquisition to release, renewing it with the semaphore's script as it renews every lock type's. The
 * waiting threads of one semaphore meet on an entry of this class's own {@link LocalLocks} under {@link #wakeName}, a name no lock key
 * can have, which is what releases publish. They queue on its mutex, first come first served, so one of them at a
 * time asks Redis and sleeps for a release (a try without waiting does not queue).
 */
final class SemaphorePermits {

    private static final Logger log = LoggerFactory.getLogger(SemaphorePermits.class);

    /** Starts the name waiting threads meet under: a control character, which no valid lock key contains. */
    private static final String WAKE_PREFIX = "\u0002semaphore:"; // \u0001 starts a fair hand-over

    private final SemaphoreScripts scripts;
    /** Where the threads waiting for permits sleep, by {@link #wakeName}: the name releases publish. */
    private final LocalLocks waiting = new LocalLocks();
    private final WaitLoop waitLoop;
    private final Watchdog watchdog;
    private final Renewer renewer;
    private final BackgroundCleanup cleanup;
    private final String clientId;
    private final Duration watchdogLease;
    private final AtomicLong acquisitions = new AtomicLong();
    /** What each thread holds, by semaphore: the outer acquisition a nested one shares. */
    private final ConcurrentHashMap<Holder, Acquisition> held = new ConcurrentHashMap<>();

    SemaphorePermits(SemaphoreScripts scripts, WaitLoop waitLoop, Watchdog watchdog,
            BackgroundCleanup cleanup, String clientId, Duration watchdogLease) {
        this.scripts = scripts;
        this.waitLoop = waitLoop;
        this.watchdog = watchdog;
        this.renewer = new Renewer(Kind.SEMAPHORE, scripts::renew, scripts.renewMany());
        this.cleanup = cleanup;
        this.clientId = clientId;
        this.watchdogLease = watchdogLease;
    }

    private record Holder(String key, Thread thread) {
    }

    /** One acquisition's permits and lease, and how many nested acquisitions of its thread share it. */
    private static final class Acquisition {

        final LocalLock lease;
        final int permits;
        final Thread thread = Thread.currentThread();
        /** Touched only by {@link #thread}. */
        int holds = 1;

        Acquisition(LocalLock lease, int permits) {
            this.lease = lease;
            this.permits = permits;
        }
    }

    /**
     * @param key a validated key
     * @param initialLimit the limit stored when Redis has none for this semaphore
     * @param lease a fixed lease, or {@code null} for the watchdog
     * @return the permits, now held by the current thread; empty if not enough came free within {@code wait}
     */
    Optional<PermitHandle> tryAcquire(String key, int initialLimit, int permits, Duration wait, Duration lease) {
        Holder me = new Holder(key, Thread.currentThread());
        Acquisition outer = held.get(me);
        if (outer != null) {
            return Optional.of(nested(outer, permits));
        }
        Deadline deadline = Deadline.startingNow(wait);
        String name = wakeName(key);
        // one id per acquisition, for its holder entry and its waiter entry: a late clean-up of an earlier
        // attempt can never touch a later one
        String holder = clientId + ":" + Thread.currentThread().getId() + ":" + acquisitions.incrementAndGet();
        long leaseMillis = lease != null ? lease.toMillis() : watchdogLease.toMillis();
        LocalLock holding = new LocalLock(key);
        LocalLock wakePoint = waiting.retain(name);
        boolean queued = false;
        try {
            if (!deadline.isTryOnce()) {
                // the threads of this JVM that wait for one semaphore take turns, in arrival order: only the first
                // asks Redis and sleeps for a release, and the next one asks once it has its permits or gave up.
                // Waking every waiting thread at each release cost a failed script call per thread for one permit.
                if (deadline.isForever()) {
                    wakePoint.mutex.lockInterruptibly();
                } else if (!wakePoint.mutex.tryLock(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                    return Optional.empty();
                }
                queued = true;
            }
            waitLoop.await(wakePoint, deadline, true, (sleepMillis, registered) -> {
                long requestStart = System.nanoTime();
                AcquireReply reply = scripts.acquire(key, holder, permits, leaseMillis, initialLimit, holder, sleepMillis,
                        registered);
                if (reply.acquired()) {
                    holding.held(holder, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart,
                            lease == null);
                }
                return reply;
            }, (registered, uncertain) -> giveUp(key, holder, registered, uncertain));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, deadline.elapsed(), e);
        } catch (LockNotAcquiredException e) { // named after the wake point: name the semaphore instead
            throw new LockNotAcquiredException(key, deadline.elapsed(), e.getCause());
        } finally {
            if (queued) {
                wakePoint.mutex.unlock();
            }
            waiting.unretain(wakePoint);
        }
        if (holding.owner == null) {
            return Optional.empty();
        }
        Acquisition acquisition = new Acquisition(holding, permits);
        held.put(me, acquisition);
        watchdog.watch(holding, renewer);
        return Optional.of(new Handle(acquisition));
    }

    private PermitHandle nested(Acquisition outer, int permits) {
        LocalLock lease = outer.lease;
        if (permits > outer.permits) {
            throw new IllegalMonitorStateException("Thread '" + Thread.currentThread().getName() + "' holds " + outer.permits
                    + " permit(s) of semaphore '" + lease.key + "' and asks for " + permits + " inside that acquisition; a "
                    + "nested acquisition shares the outer one's permits, so it may ask for at most " + outer.permits
                    + " (taking more while holding some could wait for itself forever)");
        }
        String invalid = lease.invalidReason();
        if (invalid != null) {
            throw new LockLostException(lease.key, lease.token, invalid);
        }
        outer.holds++;
        return new Handle(outer);
    }

    /** Leaves nothing behind after a failed wait: the waiter entry, and permits whose grant reply was lost. */
    private void giveUp(String key, String holder, boolean registered, boolean uncertain) {
        if (uncertain) {
            cleanup.run(() -> {
                scripts.release(key, holder, wakeName(key));
                scripts.leave(key, holder);
            });
        } else if (registered) {
            BackgroundCleanup.withoutInterrupt(() -> {
                try {
                    scripts.leave(key, holder);
                } catch (RuntimeException e) { // Redis unreachable, or this template closed meanwhile
                    log.debug("Could not withdraw from the waiters of semaphore '{}'; Redis TTLs will", key, e);
                    cleanup.run(() -> scripts.leave(key, holder));
                }
            });
        }
    }

    private void release(Acquisition acquisition) {
        if (--acquisition.holds > 0) {
            return;
        }
        LocalLock lease = acquisition.lease;
        held.remove(new Holder(lease.key, acquisition.thread), acquisition);
        long token = lease.token;
        String invalid = lease.invalidReason();
        String holder = lease.releasing();
        watchdog.unwatch(lease);
        boolean[] wasHolder = {true};
        BackgroundCleanup.withoutInterrupt(() -> {
            try {
                wasHolder[0] = scripts.release(lease.key, holder, wakeName(lease.key));
            } catch (DataAccessException e) {
                log.warn("Could not release the permits of semaphore '{}' in Redis ({}); retrying in the background, "
                        + "and their lease ends them at the latest", lease.key, e.toString());
                cleanup.run(() -> scripts.release(lease.key, holder, wakeName(lease.key)));
            }
        });
        if (invalid != null) {
            throw new LockLostException(lease.key, token, invalid);
        }
        if (!wasHolder[0]) {
            throw new LockLostException(lease.key, token, "Redis no longer had its permits at release");
        }
    }

    int available(String key, int initialLimit) {
        return scripts.available(key, initialLimit);
    }

    void setLimit(String key, int limit) {
        scripts.setLimit(key, limit, wakeName(key));
    }

    static String wakeName(String key) {
        return WAKE_PREFIX + key;
    }

    /** A release of the semaphore named {@code message} was published to this client: its waiting threads look again. */
    void wake(String message) {
        waiting.wake(message);
    }

    /** Releases may have been missed: every waiting thread looks again. */
    void wakeAll() {
        waiting.wakeAll();
    }

    /** The semaphores threads of this client wait for. */
    Stream<String> waitingKeys() {
        return waiting.keys().map(name -> name.substring(WAKE_PREFIX.length()));
    }

    /** One acquisition, handed to the caller. */
    private final class Handle implements PermitHandle, LockActivity.Leased {

        private final Acquisition acquisition;
        private final long token;
        private boolean released;

        Handle(Acquisition acquisition) {
            this.acquisition = acquisition;
            this.token = acquisition.lease.token;
        }

        @Override
        public LocalLock lease() {
            return acquisition.lease;
        }

        @Override
        public String key() {
            return acquisition.lease.key;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public int permits() {
            return acquisition.permits;
        }

        @Override
        public boolean isHeld() {
            return !released && acquisition.lease.isValid();
        }

        @Override
        public void release() {
            if (Thread.currentThread() != acquisition.thread) {
                throw new IllegalMonitorStateException("Permits of semaphore '" + key() + "' were acquired by thread '"
                        + acquisition.thread.getName() + "'; only that thread may release them (current: '"
                        + Thread.currentThread().getName() + "')");
            }
            if (released) {
                throw new IllegalMonitorStateException("Permits of semaphore '" + key() + "' were already released by this handle");
            }
            released = true;
            SemaphorePermits.this.release(acquisition);
        }

        @Override
        public String toString() {
            return "PermitHandle[" + key() + ", " + permits() + " permit(s), token " + token
                    + (isHeld() ? ", held]" : ", not held]");
        }
    }
}
