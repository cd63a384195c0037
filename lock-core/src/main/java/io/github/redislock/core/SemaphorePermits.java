package io.github.redislock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * The semaphore type: every thread asks Redis for its own permits (unlike the exclusive lock, several threads of
 * one JVM may hold permits at once), waiting on the shared {@link WaitLoop}, with one holder entry and lease per
 * acquisition, so the permits of a holder that crashed come back when its lease ends.
 * <p>
 * Each acquisition's lease is a {@link LocalLock} that is never put in {@link LocalLocks}: it records the holding
 * (owner, token, lease, validity) the way the exclusive lock's does, and the {@link Watchdog} watches it from
 * acquisition to release, renewing it with the semaphore's script as it renews every lock type's. The
 * waiting threads of one semaphore meet on an entry of this class's own {@link LocalLocks} under {@link #wakeName}, a name no lock key
 * can have, which is what releases publish. They queue in {@link PermitQueues}, first come first served, so one of them
 * at a time (the first) asks Redis and sleeps for a release (a try without waiting does not queue).
 * <p>
 * Each queued thread posts a {@link PermitOffer}: a release by another thread of this client hands the first open offer
 * permits in the release's own script call when no other client has waited longer (acknowledged by the replicas as
 * an acquisition is, with {@link RedisLockConfig.ReplicaAck} on), so a busy semaphore costs one
 * script call per acquisition and release instead of two. In Redis, a client's waiting threads are one waiter entry
 * ({@link PermitQueues#clientWaiter}), which a hand-over moves to the back of the queue while more of them wait.
 * <p>
 * This class keeps what each thread holds (a nested acquisition shares the outer one's permits) and the handles;
 * {@link PermitWaiting} takes permits, {@link PermitRelease} gives them back or hands them over.
 */
final class SemaphorePermits implements LockEngine {

    /** Starts the name waiting threads meet under: a control character, which no valid lock key contains. */
    private static final String WAKE_PREFIX = "\u0002semaphore:"; // \u0001 starts a fair hand-over

    /** Where the threads waiting for permits sleep, by {@link #wakeName}: the name releases publish. */
    private final LocalLocks waiting = new LocalLocks();
    private final SemaphoreScripts scripts;
    private final Watchdog watchdog;
    private final Renewer renewer;
    private final PermitWaiting acquiring;
    private final PermitRelease releasing;
    /** What each thread holds, by semaphore: the outer acquisition a nested one shares. */
    private final ConcurrentHashMap<Holder, Acquisition> held = new ConcurrentHashMap<>();
    /** Test hook: runs in a waiting thread just before it sends its acquire script. */
    volatile Runnable beforeAcquireScript = () -> { };
    /** Test hook: runs in a releasing thread just after its hand-over script returned, before it settles the offer. */
    volatile Runnable afterHandOverScript = () -> { };

    SemaphorePermits(SemaphoreScripts scripts, EngineContext context) {
        this.scripts = scripts;
        this.watchdog = context.watchdog;
        this.renewer = new Renewer(LockType.SEMAPHORE, scripts::renew, scripts.renewMany());
        PermitQueues queues = new PermitQueues(context.clientId);
        this.releasing = new PermitRelease(scripts, waiting, queues, context.cleanup, () -> afterHandOverScript.run());
        this.acquiring = new PermitWaiting(scripts, waiting, context, queues, releasing, () -> beforeAcquireScript.run());
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
    Optional<PermitHandle> tryAcquire(String key, int initialLimit, int permits, Duration wait, @Nullable Duration lease) {
        Holder me = new Holder(key, Thread.currentThread());
        Acquisition outer = held.get(me);
        if (outer != null) {
            return Optional.of(nested(outer, permits));
        }
        LocalLock holding = acquiring.acquire(key, initialLimit, permits, wait, lease);
        if (holding == null) {
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
        boolean wasHolder = releasing.release(lease.key, holder);
        if (invalid != null) {
            throw new LockLostException(lease.key, token, invalid);
        }
        if (!wasHolder) {
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
    @Override
    public boolean wake(String message) {
        waiting.wake(message);
        return false;
    }

    /** Releases may have been missed: every waiting thread looks again. */
    @Override
    public void wakeAll() {
        waiting.wakeAll();
    }

    /** The semaphores threads of this client wait for. */
    @Override
    public Stream<String> inUse() {
        return waiting.keys().map(name -> RedisLockDiagnostics.inUse(LockType.SEMAPHORE, name.substring(WAKE_PREFIX.length())));
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
