package io.github.redislock.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.redislock.core.LockScripts.AcquireReply;
import io.github.redislock.core.PermitOffer.Turn;
import io.github.redislock.core.WaitLoop.Deadline;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes a semaphore's permits for a thread that holds none of it: queues the thread behind this client's other
 * waiting threads with a {@link PermitOffer} (a try without waiting does not queue), waits for its turn or for
 * permits a release hands it, and, first in line, asks Redis and sleeps on the shared {@link WaitLoop} for a
 * release. Leaves nothing behind after a failed wait: this client's waiter entry when no other thread of it waits,
 * and permits whose grant reply was lost or that a release handed over as the thread gave up.
 */
final class PermitWaiting {

    private static final Logger log = LoggerFactory.getLogger(PermitWaiting.class);

    private final SemaphoreScripts scripts;
    /** Where the threads waiting for permits sleep, by {@link SemaphorePermits#wakeName}: the name releases publish. */
    private final LocalLocks waiting;
    private final WaitLoop waitLoop;
    private final PermitQueues queues;
    private final PermitRelease releases;
    private final BackgroundCleanup cleanup;
    private final EngineContext context;
    private final Duration watchdogLease;
    /** Test hook: runs in a waiting thread just before it sends its acquire script. */
    private final Runnable beforeAcquireScript;

    PermitWaiting(SemaphoreScripts scripts, LocalLocks waiting, EngineContext context, PermitQueues queues,
            PermitRelease releases, Runnable beforeAcquireScript) {
        this.scripts = scripts;
        this.waiting = waiting;
        this.context = context;
        this.waitLoop = context.waitLoop;
        this.queues = queues;
        this.releases = releases;
        this.cleanup = context.cleanup;
        this.watchdogLease = context.watchdogLease;
        this.beforeAcquireScript = beforeAcquireScript;
    }

    /**
     * @param key a validated key
     * @param initialLimit the limit stored when Redis has none for this semaphore
     * @param lease a fixed lease, or {@code null} for the watchdog
     * @return the permits' lease, now held by the current thread; {@code null} if not enough came free within
     *         {@code wait}
     * @throws LockNotAcquiredException when the wait was interrupted or Redis could not be reached
     */
    @Nullable LocalLock acquire(String key, int initialLimit, int permits, Duration wait, @Nullable Duration lease) {
        Deadline deadline = Deadline.startingNow(wait);
        String name = SemaphorePermits.wakeName(key);
        // one id per acquisition, for its holder entry and its waiter entry: a late clean-up of an earlier
        // attempt can never touch a later one
        String holder = context.newOwner();
        long leaseMillis = lease != null ? lease.toMillis() : watchdogLease.toMillis();
        LocalLock holding = new LocalLock(key);
        LocalLock wakePoint = waiting.retain(name);
        PermitOffer offer = null;
        String waiter = queues.clientWaiter();
        try {
            PermitQueues.Queue queue = null;
            if (!deadline.isTryOnce()) {
                // the threads of this JVM that wait for one semaphore take turns, in arrival order: only the first
                // asks Redis and sleeps for a release, and the next one asks once it has its permits or gave up.
                // Waking every waiting thread at each release cost a failed script call per thread for one permit.
                offer = new PermitOffer(holder, permits, leaseMillis);
                queue = queues.enqueue(key, offer);
                Turn turn = offer.awaitTurn(deadline);
                if (turn == Turn.TIMED_OUT) {
                    return null;
                }
                if (turn == Turn.HANDED) {
                    holding.held(holder, offer.granted(deadline), TimeUnit.MILLISECONDS.toNanos(leaseMillis), offer.grantedAtNanos(),
                            lease == null);
                }
            }
            if (holding.owner == null) {
                PermitOffer myOffer = offer;
                PermitQueues.Queue myQueue = queue;
                waitLoop.await(wakePoint, deadline, true, (sleepMillis, registered, attempt) -> {
                    if (myOffer != null) {
                        AcquireReply handed = handedOver(myOffer.granted(deadline), myOffer, holding, holder, leaseMillis,
                                lease);
                        if (handed != null) {
                            return handed;
                        }
                        if (sleepMillis > 0 && myQueue.knownFull(wakePoint)) {
                            // a hand-over just left no permit free and registered this client as waiting
                            return new AcquireReply(0, PermitQueues.SLEEP_AFTER_FULL_HAND_OVER_MILLIS);
                        }
                        // from here until its script answers, releases return their permits to Redis instead of
                        // handing them to this thread; one that claimed its offer meanwhile is waited for first
                        handed = handedOver(myOffer.grantedOrAsk(deadline), myOffer, holding, holder, leaseMillis, lease);
                        if (handed != null) {
                            return handed;
                        }
                    }
                    boolean acquired = false;
                    try {
                        beforeAcquireScript.run();
                        long requestStart = System.nanoTime();
                        AcquireReply reply = scripts.acquire(key, holder, permits, leaseMillis, initialLimit, waiter,
                                sleepMillis, registered, attempt);
                        if (reply.acquired()) {
                            holding.held(holder, reply.token(), TimeUnit.MILLISECONDS.toNanos(leaseMillis), requestStart,
                                    lease == null);
                            acquired = true;
                        }
                        return reply;
                    } finally {
                        if (myOffer != null) {
                            myOffer.answered(acquired);
                        }
                    }
                }, (registered, uncertain) -> giveUp(key, holder, registered, uncertain));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockNotAcquiredException(key, deadline.elapsed(), e);
        } catch (LockNotAcquiredException e) { // named after the wake point: name the semaphore instead
            throw new LockNotAcquiredException(key, deadline.elapsed(), e.getCause());
        } finally {
            if (offer != null) {
                queues.dequeue(key, offer);
                boolean holds = holding.owner != null;
                if (offer.close() && !holds) {
                    // a release handed permits over (or may have) as this thread gave up: return them
                    cleanup.run(key, () -> releases.returnPermits(key, holder));
                }
            }
            waiting.unretain(wakePoint);
        }
        return holding.owner != null ? holding : null;
    }

    /**
     * What a look at the offer found: {@code token} > 0, permits a release handed over, now held; -1, the wait is over
     * while a release hands permits over (it may be stuck in Redis): the release returns them, this thread keeps its
     * wait time; 0, nothing handed over ({@code null}).
     */
    private static @Nullable AcquireReply handedOver(long token, PermitOffer offer, LocalLock holding, String holder,
            long leaseMillis, @Nullable Duration lease) {
        if (token < 0) {
            return new AcquireReply(0, 0);
        }
        if (token > 0) {
            holding.held(holder, token, TimeUnit.MILLISECONDS.toNanos(leaseMillis), offer.grantedAtNanos(), lease == null);
            return new AcquireReply(token, 0);
        }
        return null;
    }

    /**
     * Leaves nothing behind after a failed wait: the waiter entry (unless more threads of this client wait), and
     * permits whose grant reply was lost.
     */
    private void giveUp(String key, String holder, boolean registered, boolean uncertain) {
        boolean othersWait = queues.othersWait(key);
        String waiter = queues.clientWaiter();
        if (uncertain) {
            cleanup.run(key, () -> {
                scripts.abandon(key, holder); // first: an attempt landing later then changes nothing
                releases.returnPermits(key, holder);
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
                    cleanup.run(key, () -> scripts.leave(key, waiter));
                }
            });
        }
    }
}
