package io.github.redislock.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.RedisLockDiagnostics.Kind;
import io.github.redislock.core.SemaphoreScripts.HandOverReply;
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
 * can have, which is what releases publish. They queue in a {@link Queue}, first come first served, so one of them
 * at a time (the first) asks Redis and sleeps for a release (a try without waiting does not queue).
 * <p>
 * Each queued thread posts an {@link Offer}: a release by another thread of this client hands the first open offer
 * permits in the release's own script call when no other client has waited longer (acknowledged by the replicas as
 * an acquisition is, with {@link RedisLockConfig.ReplicaAck} on), so a busy semaphore costs one
 * script call per acquisition and release instead of two. In Redis, a client's waiting threads are one waiter entry
 * ({@link #clientWaiter}), which a hand-over moves to the back of the queue while more of them wait.
 */
final class SemaphorePermits {

    private static final Logger log = LoggerFactory.getLogger(SemaphorePermits.class);

    /** Starts the name waiting threads meet under: a control character, which no valid lock key contains. */
    private static final String WAKE_PREFIX = "\u0002semaphore:"; // \u0001 starts a fair hand-over
    /**
     * How long the next thread in line may sleep without asking Redis after a hand-over left no permit free (the
     * release registered this client as waiting, so other clients' releases still wake it); it asks then.
     */
    private static final long SLEEP_AFTER_FULL_HAND_OVER_MILLIS = 1000;
    /** How long the waiter entry a hand-over leaves for this client's further waiting threads lives. */
    private static final long HANDED_OVER_ENTRY_MILLIS = 3 * SLEEP_AFTER_FULL_HAND_OVER_MILLIS;

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
    /** This client's threads waiting for each semaphore, by key; a queue goes with its last thread. */
    private final ConcurrentHashMap<String, Queue> queues = new ConcurrentHashMap<>();
    /** Looks whether permits a release freed were taken by the clients it woke, when it did not wake them all. */
    private final WakeLooks looks;
    /** Test hook: runs in a waiting thread just before it sends its acquire script. */
    volatile Runnable beforeAcquireScript = () -> { };
    /** Test hook: runs in a releasing thread just after its hand-over script returned, before it settles the offer. */
    volatile Runnable afterHandOverScript = () -> { };

    SemaphorePermits(SemaphoreScripts scripts, WaitLoop waitLoop, Watchdog watchdog,
            BackgroundCleanup cleanup, String clientId, Duration watchdogLease) {
        this.scripts = scripts;
        this.waitLoop = waitLoop;
        this.watchdog = watchdog;
        this.renewer = new Renewer(Kind.SEMAPHORE, scripts::renew, scripts.renewMany());
        this.cleanup = cleanup;
        this.clientId = clientId;
        this.watchdogLease = watchdogLease;
        this.looks = new WakeLooks(cleanup, key -> {
            scripts.look(key, wakeName(key));
            return 0;
        });
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
     * This client's threads waiting for one semaphore, first come first served: the first asks Redis, the others
     * wait for their turn or for permits handed to them. Its deque is guarded by {@link #queues}' compute.
     */
    private static final class Queue {

        final ArrayDeque<Offer> offers = new ArrayDeque<>();
        /** Wake-ups of the semaphore's wake point that were hand-overs to the first thread: they free no permit. */
        final AtomicLong handOverWakeups = new AtomicLong();
        /** {@link #frees} when a hand-over left no permit free (and registered this client as waiting), or -1. */
        volatile long fullAtFrees = -1;
        volatile long fullAtNanos;

        /** Counts the wake-ups that may have freed permits: releases published to this client, raised limits. */
        long frees(LocalLock wakePoint) {
            return wakePoint.wakeups() - handOverWakeups.get();
        }

        /**
         * Whether the last hand-over left no permit free and nothing that may free one woke this client since (within
         * {@link #SLEEP_AFTER_FULL_HAND_OVER_MILLIS}): the first thread may then sleep without asking Redis.
         */
        boolean knownFull(LocalLock wakePoint) {
            return fullAtFrees == frees(wakePoint)
                    && System.nanoTime() - fullAtNanos < TimeUnit.MILLISECONDS.toNanos(SLEEP_AFTER_FULL_HAND_OVER_MILLIS);
        }
    }

    /** How a queued thread's wait for its turn ended. */
    private enum Turn { FIRST, HANDED, TIMED_OUT }

    /**
     * What a queued thread asks for, so that a release by another thread can hand it permits: claimed by at most
     * one release at a time, settled by it with a token or nothing, closed by the waiter when it stops waiting. A
     * waiter whose wait time ends while a release has its offer claimed does not wait for that release (which may be
     * stuck in Redis up to the driver's timeout): it withdraws, and the release returns what it handed over.
     */
    private static final class Offer {

        final String holder;
        final int permits;
        final long leaseMillis;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private boolean first;
        private boolean claimed;
        private boolean closed;
        private long token;
        private long grantedAtNanos;
        /** A claiming release failed to reach Redis: it may have handed permits over that nobody knows of. */
        private boolean uncertain;
        /** The waiter stopped waiting while a release had it claimed: that release returns what it hands over. */
        private boolean withdrawn;

        Offer(String holder, int permits, long leaseMillis) {
            this.holder = holder;
            this.permits = permits;
            this.leaseMillis = leaseMillis;
        }

        /** It is the first of its queue now: it asks Redis. */
        void becomeFirst() {
            lock.lock();
            try {
                first = true;
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }

        boolean isFirst() {
            lock.lock();
            try {
                return first;
            } finally {
                lock.unlock();
            }
        }

        /** Whether a release may still hand it permits (not claimed by another, not settled, not closed). */
        boolean isOpen() {
            lock.lock();
            try {
                return !claimed && !closed;
            } finally {
                lock.unlock();
            }
        }

        boolean claim() {
            lock.lock();
            try {
                if (claimed || closed) {
                    return false;
                }
                claimed = true;
                return true;
            } finally {
                lock.unlock();
            }
        }

        /**
         * Ends a claim: {@code grantedToken} > 0 when the release handed the permits over.
         *
         * @return whether the waiter withdrew meanwhile and permits were (or may have been) handed to it: the
         *         release must return them
         */
        boolean settle(long grantedToken, long requestStartNanos, boolean failed) {
            lock.lock();
            try {
                if (withdrawn) {
                    claimed = false;
                    changed.signalAll();
                    return grantedToken > 0 || failed;
                }
                if (grantedToken > 0) {
                    token = grantedToken;
                    grantedAtNanos = requestStartNanos;
                    closed = true;
                }
                uncertain |= failed;
                claimed = false;
                changed.signalAll();
                return false;
            } finally {
                lock.unlock();
            }
        }

        /** Waits until permits are handed to it, it is first in its queue, or the deadline passes. */
        Turn awaitTurn(Deadline deadline) throws InterruptedException {
            lock.lock();
            try {
                while (true) {
                    if (token > 0) {
                        return Turn.HANDED;
                    }
                    if (first) {
                        return Turn.FIRST;
                    }
                    long left = deadline.remainingNanos();
                    if (left <= 0) {
                        return Turn.TIMED_OUT; // also while a release hands permits over: it returns them then
                    }
                    changed.awaitNanos(left);
                }
            } finally {
                lock.unlock();
            }
        }

        /**
         * The token handed over, or 0; waits for a claiming release's answer first, until the deadline: -1 when a
         * release still hands permits over then.
         */
        long granted(Deadline deadline) {
            lock.lock();
            try {
                while (claimed) {
                    long left = deadline.remainingNanos();
                    if (left <= 0) {
                        return -1;
                    }
                    changed.awaitNanos(left);
                }
                return token;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the wait loop ends the wait on it
                return claimed ? -1 : token;
            } finally {
                lock.unlock();
            }
        }

        /**
         * No release claims it any more. Returns whether permits may have been handed over that the caller must
         * return; a release under way returns what it hands over itself, so this does not wait for it, unless the
         * waiter {@code holds} permits under the offer's holder id: its own acquire found the hand-over already in
         * Redis and kept it, so whatever the release hands over is what the waiter holds, and its release returns it.
         */
        boolean close(boolean holds) {
            lock.lock();
            try {
                closed = true;
                if (claimed) {
                    withdrawn = !holds;
                    return false;
                }
                return token > 0 || uncertain;
            } finally {
                lock.unlock();
            }
        }

        long grantedAtNanos() {
            lock.lock();
            try {
                return grantedAtNanos;
            } finally {
                lock.unlock();
            }
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
        Offer offer = null;
        String waiter = clientWaiter();
        try {
            Queue queue = null;
            if (!deadline.isTryOnce()) {
                // the threads of this JVM that wait for one semaphore take turns, in arrival order: only the first
                // asks Redis and sleeps for a release, and the next one asks once it has its permits or gave up.
                // Waking every waiting thread at each release cost a failed script call per thread for one permit.
                offer = new Offer(holder, permits, leaseMillis);
                queue = enqueue(key, offer);
                Turn turn = offer.awaitTurn(deadline);
                if (turn == Turn.TIMED_OUT) {
                    return Optional.empty();
                }
                if (turn == Turn.HANDED) {
                    holding.held(holder, offer.granted(deadline), TimeUnit.MILLISECONDS.toNanos(leaseMillis), offer.grantedAtNanos(),
                            lease == null);
                }
            }
            if (holding.owner == null) {
                Offer myOffer = offer;
                Queue myQueue = queue;
                waitLoop.await(wakePoint, deadline, true, (sleepMillis, registered) -> {
                    if (myOffer != null) {
                        long handed = myOffer.granted(deadline);
                        if (handed < 0) {
                            // the wait is over while a release hands permits over (it may be stuck in Redis): the
                            // release returns them, this thread keeps its wait time
                            return new AcquireReply(0, 0);
                        }
                        if (handed > 0) {
                            holding.held(holder, handed, TimeUnit.MILLISECONDS.toNanos(leaseMillis),
                                    myOffer.grantedAtNanos(), lease == null);
                            return new AcquireReply(handed, 0);
                        }
                        if (sleepMillis > 0 && myQueue.knownFull(wakePoint)) {
                            // a hand-over just left no permit free and registered this client as waiting
                            return new AcquireReply(0, SLEEP_AFTER_FULL_HAND_OVER_MILLIS);
                        }
                    }
                    beforeAcquireScript.run();
                    long requestStart = System.nanoTime();
                    AcquireReply reply = scripts.acquire(key, holder, permits, leaseMillis, initialLimit, waiter,
                            sleepMillis, registered);
                    if (reply.acquired()) {
                        holding.held(holder, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart,
                                lease == null);
                    }
                    return reply;
                }, (registered, uncertain) -> giveUp(key, holder, registered, uncertain));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, deadline.elapsed(), e);
        } catch (LockNotAcquiredException e) { // named after the wake point: name the semaphore instead
            throw new LockNotAcquiredException(key, deadline.elapsed(), e.getCause());
        } finally {
            if (offer != null) {
                dequeue(key, offer);
                boolean holds = holding.owner != null;
                if (offer.close(holds) && !holds) {
                    // a release handed permits over (or may have) as this thread gave up: return them
                    cleanup.run(() -> returnPermits(key, holder));
                }
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

    private Queue enqueue(String key, Offer offer) {
        return queues.compute(key, (k, queue) -> {
            Queue q = queue != null ? queue : new Queue();
            q.offers.addLast(offer);
            if (q.offers.peekFirst() == offer) {
                offer.becomeFirst();
            }
            return q;
        });
    }

    private void dequeue(String key, Offer offer) {
        queues.computeIfPresent(key, (k, queue) -> {
            boolean wasFirst = queue.offers.peekFirst() == offer;
            queue.offers.remove(offer);
            if (queue.offers.isEmpty()) {
                return null;
            }
            if (wasFirst) {
                queue.offers.peekFirst().becomeFirst();
            }
            return queue;
        });
    }

    /** Whether more than {@code but} of this client's threads wait for the semaphore. */
    private boolean othersWait(String key) {
        Queue queue = queues.get(key);
        return queue != null && queue.offers.size() > 1;
    }

    /** This client's waiter id for every semaphore: its waiting threads are one entry in Redis, their queue is here. */
    private String clientWaiter() {
        return clientId + ":queue";
    }

    /**
     * Leaves nothing behind after a failed wait: the waiter entry (unless more threads of this client wait), and
     * permits whose grant reply was lost.
     */
    private void giveUp(String key, String holder, boolean registered, boolean uncertain) {
        boolean othersWait = othersWait(key);
        String waiter = clientWaiter();
        if (uncertain) {
            cleanup.run(() -> {
                returnPermits(key, holder);
                if (!othersWait) {
                    scripts.leave(key, waiter);
                }
            });
        } else if (registered && !othersWait) {
            BackgroundCleanup.withoutInterrupt(() -> {
                try {
                    scripts.leave(key, waiter);
                } catch (RuntimeException e) { // Redis unreachable, or this template closed meanwhile
                    log.debug("Could not withdraw from the waiters of semaphore '{}'; Redis TTLs will", key, e);
                    cleanup.run(() -> scripts.leave(key, waiter));
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
                wasHolder[0] = releaseOrHandOver(lease.key, holder);
            } catch (DataAccessException e) {
                log.warn("Could not release the permits of semaphore '{}' in Redis ({}); retrying in the background, "
                        + "and their lease ends them at the latest", lease.key, e.toString());
                cleanup.run(() -> returnPermits(lease.key, holder));
            }
        });
        if (invalid != null) {
            throw new LockLostException(lease.key, token, invalid);
        }
        if (!wasHolder[0]) {
            throw new LockLostException(lease.key, token, "Redis no longer had its permits at release");
        }
    }

    /**
     * Returns {@code holder}'s permits, handing them to the thread at the head of this client's queue in the same
     * script call when it has posted an offer (and no other client waited longer).
     *
     * @return whether {@code holder} still had its permits
     */
    private boolean releaseOrHandOver(String key, String holder) {
        String name = wakeName(key);
        Offer[] target = {null};
        boolean[] moreWaiting = {false};
        Queue queue = queues.computeIfPresent(key, (k, q) -> {
            for (Offer offer : q.offers) {
                if (target[0] == null) {
                    if (offer.claim()) {
                        target[0] = offer;
                    }
                } else if (offer.isOpen()) {
                    moreWaiting[0] = true;
                    break;
                }
            }
            return q;
        });
        Offer offer = target[0];
        if (offer == null) {
            return returnPermits(key, holder);
        }
        LocalLock wakePoint = waiting.get(name);
        long freesBefore = wakePoint == null ? -1 : queue.frees(wakePoint);
        long requestStart = System.nanoTime();
        HandOverReply reply;
        try {
            reply = lookLater(key, scripts.releaseAndHandOver(key, holder, name, offer.holder, offer.permits,
                    offer.leaseMillis, clientWaiter(), moreWaiting[0], HANDED_OVER_ENTRY_MILLIS));
            afterHandOverScript.run();
        } catch (RuntimeException e) {
            settleAndReturnIfWithdrawn(key, offer, 0, 0, true);
            throw e;
        }
        if (reply.unacknowledged()) {
            // taken back (or ended by its lease if that failed too): the next thread asks Redis itself
            settleAndReturnIfWithdrawn(key, offer, 0, 0, true);
            if (wakePoint != null) {
                wakePoint.wake(); // the permits are free again, and this client's waiter entry may be gone from Redis
            }
        } else if (reply.handedOver()) {
            if (reply.full() && moreWaiting[0] && wakePoint != null) {
                queue.fullAtNanos = System.nanoTime();
                queue.fullAtFrees = freesBefore;
            }
            if (settleAndReturnIfWithdrawn(key, offer, reply.token(), requestStart, false)) {
                return reply.wasHolder(); // its thread stopped waiting: the permits go back to the semaphore
            }
            if (wakePoint != null && offer.isFirst()) {
                // the first thread sleeps on the wake point, not on its offer
                queue.handOverWakeups.incrementAndGet();
                wakePoint.wake();
            }
        } else {
            // declined (another client waited longer, or too few permits): the script woke the waiting clients,
            // this one too if it waits, in their order
            settleAndReturnIfWithdrawn(key, offer, 0, 0, false);
        }
        return reply.wasHolder();
    }

    /**
     * Returns {@code holder}'s permits in Redis (waking the threads waiting longest).
     *
     * @return whether {@code holder} still had them
     */
    private boolean returnPermits(String key, String holder) {
        return lookLater(key, scripts.release(key, holder, wakeName(key))).wasHolder();
    }

    /**
     * After a release that may not have woken every waiting client: looks a turn's time later whether permits are
     * still free, and if so wakes every client still waiting, so clients that died in front of the queue (their
     * entries not yet stale) do not strand a live one until its next look.
     */
    private HandOverReply lookLater(String key, HandOverReply reply) {
        if (reply.lookLater()) {
            looks.after(key);
        }
        return reply;
    }

    /**
     * Settles {@code offer}'s claim; when its thread stopped waiting meanwhile and permits were (or may have been)
     * handed to it, returns them.
     *
     * @return whether the thread had stopped waiting and the permits are being returned
     */
    private boolean settleAndReturnIfWithdrawn(String key, Offer offer, long token, long requestStart, boolean failed) {
        if (!offer.settle(token, requestStart, failed)) {
            return false;
        }
        cleanup.run(() -> returnPermits(key, offer.holder));
        return true;
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
